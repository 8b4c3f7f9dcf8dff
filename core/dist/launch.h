#pragma once
// A data-parallel launch as PyTorch's launchers describe it (torchrun, mpirun wrappers, Slurm's srun, or
// `descentlab-cli train --nproc N`), the backends and how work is split by rank: the torch-free part of core/dist,
// which the CLI's commands read without LibTorch's headers. The process group itself is process_group.h.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include "core/util/error.h"

namespace descentlab::dist {

// A failed rendezvous, a collective that timed out or lost a peer, ranks that disagree (their configs, their
// replicas): the message names this rank, the collective and the likely cause.
class DistributedError : public Error {
 public:
  using Error::Error;
};

struct LaunchEnvironment {
  int rank = 0;
  int world_size = 1;
  int local_rank = 0;
  std::string master_addr;
  int master_port = 0;
};

// The launch this process belongs to, read through `lookup` (getenv by default): nullopt when WORLD_SIZE is unset
// (a plain single-process run). Under MPI launchers, which set only their own names, OMPI_COMM_WORLD_SIZE / _RANK /
// _LOCAL_RANK (Open MPI) or PMI_SIZE / PMI_RANK (MPICH, Intel MPI, srun --mpi=pmi2) stand for them. A DistributedError
// names the variable when one is missing or malformed (RANK outside 0..WORLD_SIZE-1, a port outside 1..65535, ...).
// MASTER_ADDR defaults to 127.0.0.1 and LOCAL_RANK to RANK, as torchrun's single-node defaults do; MASTER_PORT must be
// given when WORLD_SIZE > 1.
std::optional<LaunchEnvironment> launch_environment(const std::function<const char*(const char*)>& lookup = nullptr);

enum class Backend { gloo, nccl };
std::string word(Backend backend);
// Whether this build of LibTorch has NCCL (Debian's LibTorch is CPU-only: it has not).
bool nccl_available();
// "auto" and "gloo": Gloo (CPU tensors, and CUDA tensors through the host). "nccl": a clear error for now (this build
// does not link ProcessGroupNCCL; Debian's LibTorch has none).
Backend choose_backend(const std::string& requested, bool cuda_device);

// The part [first, end) of `total` items (a batch, a test split) that `rank` of `ranks` takes: contiguous, in rank
// order, sizes differing by at most one.
std::pair<int64_t, int64_t> part_of(int64_t total, int64_t rank, int64_t ranks);

}  // namespace descentlab::dist
