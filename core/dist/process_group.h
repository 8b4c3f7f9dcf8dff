#pragma once
// Data-parallel training across processes (issue 19; docs/scale-out.md) over LibTorch's own distributed engine,
// c10d: a TCP rendezvous store at MASTER_ADDR:MASTER_PORT and a Gloo process group (CPU tensors, and CUDA tensors
// through the host). Nothing here is a communication layer of our own: a Group only names c10d's collectives for
// the trainers, flattens many tensors into few messages, bounds every wait by a timeout and turns c10d's failures
// into errors that say which rank, which collective and what to look at.
//
// A launch is described the way PyTorch's launchers describe it (torchrun, mpirun wrappers, Slurm's srun, or
// `descentlab-cli train --nproc N`): RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR, MASTER_PORT in the environment.

#include <torch/types.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

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

enum class ReduceOp { sum, min, max };

// The part [first, end) of `total` items (a batch, a test split) that `rank` of `ranks` takes: contiguous, in rank
// order, sizes differing by at most one.
std::pair<int64_t, int64_t> part_of(int64_t total, int64_t rank, int64_t ranks);

class Group {
 public:
  // Rendezvous (rank 0 hosts the store) and connection of every rank. `timeout` bounds the rendezvous and every
  // later collective: a rank that dies or hangs makes every other rank fail with a DistributedError within it.
  Group(const LaunchEnvironment& launch, Backend backend, std::chrono::milliseconds timeout);
  ~Group();
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;

  int rank() const;
  int size() const;
  Backend backend() const;
  std::chrono::milliseconds timeout() const;

  // Reduces every tensor in place over all ranks (same shapes and dtypes on every rank, in the same order). The
  // tensors are packed into flat buffers of one dtype and at most `bucket_bytes` each, all sent at once and then
  // waited for. `what` names the collective in errors ("the gradients of step 12").
  void all_reduce(std::vector<torch::Tensor>& tensors, ReduceOp op, const std::string& what,
                  int64_t bucket_bytes = 25 << 20);
  // Rank `root`'s values of `tensors` on every rank (in place).
  void broadcast(std::vector<torch::Tensor>& tensors, int root, const std::string& what);
  // Rank `root`'s bytes on every rank (the others' `bytes` are replaced; their size need not match).
  std::vector<uint8_t> broadcast_bytes(std::vector<uint8_t> bytes, int root, const std::string& what);
  // Every rank's text, in rank order (through the rendezvous store; for start-up checks, not for the step loop).
  std::vector<std::string> all_gather_text(const std::string& text, const std::string& what);
  void barrier(const std::string& what);

  // Seconds spent waiting in collectives since the group was made (communication time, for the benchmarks).
  double communication_seconds() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace descentlab::dist
