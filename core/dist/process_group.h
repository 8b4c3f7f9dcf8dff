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

#include "core/dist/launch.h"
#include "core/util/error.h"

namespace descentlab::dist {

enum class ReduceOp { sum, min, max };

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
