// What overlapping the all-reduce with backward could hide, at most (issue 19, docs/benchmarks.md): the time of the
// gradients' all-reduce alone, both ranks ready, no computation beside it. Two processes on this machine (the bench
// forks its rank 1 before LibTorch starts a thread) join a Gloo group over the loopback, exactly as `train --nproc 2`
// does (core/dist/process_group.h), and all-reduce a float tensor of each preset's gradient size, REPS times after a
// barrier. The per-step collective wait that `train --nproc 2` measures (bench/data_parallel_scaling.sh) is this
// transfer plus the wait for the slower rank; only the transfer can run under backward.
//
// Usage: descentlab_bench_allreduce [REPS] [MB...]   (defaults: 50, and the presets' 3.13 MB (text-constrained) and
// 0.56 MB (vit-horst) of float32 gradients)

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <torch/torch.h>

#include "core/dist/process_group.h"

namespace {

void run_rank(int rank, int port, int reps, const std::vector<double>& megabytes, std::vector<double>& medians) {
  descentlab::dist::LaunchEnvironment launch;
  launch.rank = rank;
  launch.world_size = 2;
  launch.local_rank = rank;
  launch.master_addr = "127.0.0.1";
  launch.master_port = port;
  descentlab::dist::Group group(launch, descentlab::dist::Backend::gloo, std::chrono::seconds(60));
  for (const double mb : megabytes) {
    const auto elements = static_cast<int64_t>(mb * 1e6 / 4.0);
    std::vector<torch::Tensor> gradients = {torch::ones({elements})};
    for (int warm = 0; warm < 3; ++warm) group.all_reduce(gradients, descentlab::dist::ReduceOp::sum, "warm-up");
    std::vector<double> seconds;
    for (int rep = 0; rep < reps; ++rep) {
      group.barrier("before a timed all-reduce");
      const auto start = std::chrono::steady_clock::now();
      group.all_reduce(gradients, descentlab::dist::ReduceOp::sum, "a timed all-reduce");
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(seconds.begin(), seconds.end());
    medians.push_back(seconds[seconds.size() / 2]);
  }
  group.barrier("the end");
}

}  // namespace

int main(int argc, char** argv) {
  const int reps = argc > 1 ? std::max(1, std::atoi(argv[1])) : 50;
  std::vector<double> megabytes;
  for (int i = 2; i < argc; ++i) megabytes.push_back(std::atof(argv[i]));
  if (megabytes.empty()) megabytes = {3.13, 0.56};
  const int port = 20000 + static_cast<int>(::getpid() % 20000);
  torch::set_num_threads(1);
  const pid_t child = ::fork();
  if (child < 0) {
    std::perror("fork");
    return 1;
  }
  std::vector<double> medians;
  try {
    run_rank(child == 0 ? 1 : 0, port, reps, megabytes, medians);
  } catch (const std::exception& error) {
    std::fprintf(stderr, "rank %d: %s\n", child == 0 ? 1 : 0, error.what());
    return 1;
  }
  if (child == 0) return 0;
  int status = 0;
  ::waitpid(child, &status, 0);
  std::printf("| MB all-reduced | median ms per all-reduce (rank 0, %d reps, 2 processes, Gloo, loopback) |\n", reps);
  std::printf("| --- | --- |\n");
  for (size_t i = 0; i < megabytes.size(); ++i) std::printf("| %.2f | %.2f |\n", megabytes[i], medians[i] * 1e3);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
