// Issue 53 item 8: how long loading a user's TorchScript module takes (read from its file, the archive checked,
// torch::jit::load, its parameters adopted), best of --repeat loads, printed as JSON. bench/script_model_speed.sh
// writes a 25 M-parameter module with Debian's python3-torch and times Python's torch.jit.load beside it.
//   descentlab_bench_script_load MODULE.pt [REPEAT]

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>

#include "core/models/script_model.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODULE.pt [REPEAT]\n", argv[0]);
    return 2;
  }
  torch::set_num_threads(1);
  const std::string path = argv[1];
  const int repeat = argc > 2 ? std::max(1, std::stoi(argv[2])) : 3;
  double best = 1e30;
  int64_t parameters = 0;
  for (int i = 0; i < repeat; ++i) {
    const auto started = std::chrono::steady_clock::now();
    descentlab::models::ScriptModelImpl model(path, torch::kCPU);
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
    parameters = model.parameter_count();
  }
  std::printf("{\"module\": \"%s\", \"parameters\": %lld, \"load_seconds_best\": %.3f}\n", path.c_str(),
              static_cast<long long>(parameters), best);
  return 0;
}
