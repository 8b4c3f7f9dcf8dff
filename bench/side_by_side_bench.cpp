// Two runs side by side in one process, as the window trains a tour's pair: what each run's own random stream
// (core/train/random_stream.h) costs against the shared generator it replaced. Each round trains the same two runs
// (seeds 0 and 1, one torch thread each, each on its own worker thread) once with streams off (shared generator)
// and once with streams on, in alternating order, for --steps steps; the time is each run's training time (after
// its data and model are ready), averaged over the two. The ratio streams / shared is the median over the rounds.
// Run files go to a scratch folder.
// Usage: descentlab_bench_side_by_side [--preset NAME] [--size quick|full|large] [--steps N] [--rounds R] [--set
// k=v]...

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "core/config/experiment_config.h"
#include "core/runtime.h"
#include "core/session/training_session.h"
#include "core/train/random_stream.h"

namespace {

using namespace descentlab;
using Clock = std::chrono::steady_clock;

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const size_t middle = values.size() / 2;
  return values.size() % 2 ? values[middle] : 0.5 * (values[middle - 1] + values[middle]);
}

// Seconds of training (from a run's start callback, once its data and model are ready, to its end), averaged over
// the two runs, side by side; setup (reading and tokenising the data) is left out, it draws nothing.
double pair_seconds(const config::ExperimentConfig& base, int64_t steps, const std::filesystem::path& folder,
                    const std::string& tag) {
  std::vector<std::unique_ptr<session::TrainingSession>> sessions;
  std::vector<Clock::time_point> ready(2), done(2);
  std::vector<std::string> errors(2);
  for (int64_t seed : {0, 1}) {
    config::ExperimentConfig config = base;
    config.train.seed = static_cast<uint64_t>(seed);
    session::SessionOptions options;
    options.run_path = (folder / (tag + "-seed" + std::to_string(seed) + ".h5")).string();
    options.overwrite = true;
    sessions.push_back(std::make_unique<session::TrainingSession>(config, options));
    sessions.back()->set_step_limit(steps);
    const auto index = static_cast<size_t>(seed);
    sessions.back()->on_start([&ready, index](const session::SessionStart&) { ready[index] = Clock::now(); });
  }
  for (size_t i = 0; i < sessions.size(); ++i) {
    sessions[i]->start([&errors, &done, i](const session::TrainingResult&, const std::string& error) {
      done[i] = Clock::now();
      errors[i] = error;
    });
  }
  for (auto& session : sessions) session->join();
  for (const auto& error : errors) {
    if (!error.empty()) throw std::runtime_error(error);
  }
  double seconds = 0;
  for (size_t i = 0; i < 2; ++i) seconds += 0.5 * std::chrono::duration<double>(done[i] - ready[i]).count();
  return seconds;
}

}  // namespace

int main(int argc, char** argv) {
  std::string preset = "video-constrained", size = "quick";
  int64_t steps = 150, rounds = 4;
  std::vector<std::string> overrides;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--preset")
      preset = value;
    else if (flag == "--size")
      size = value;
    else if (flag == "--steps")
      steps = std::stoll(value);
    else if (flag == "--rounds")
      rounds = std::stoll(value);
    else if (flag == "--set")
      overrides.push_back(value);
    else {
      std::fprintf(stderr, "unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  configure_process(threads_from_environment(1));
  const config::ExperimentConfig config = config::load_experiment(preset, size, "", overrides);
  const auto folder = std::filesystem::temp_directory_path() / "descentlab-side-by-side-bench";
  std::filesystem::create_directories(folder);
  std::printf("%s %s, 2 runs side by side, %lld steps each, %d torch thread(s) per run\n", preset.c_str(), size.c_str(),
              static_cast<long long>(steps), threads_from_environment(1));
  std::vector<double> shared, streams, ratios;
  for (int64_t round = 0; round < rounds; ++round) {
    double with_shared = 0, with_streams = 0;
    for (int pass = 0; pass < 2; ++pass) {
      const bool use_streams = (pass == 0) == (round % 2 == 1);  // alternate which goes first
      train::set_random_streams_enabled(use_streams);
      const double seconds = pair_seconds(config, steps, folder, use_streams ? "streams" : "shared");
      (use_streams ? with_streams : with_shared) = seconds;
    }
    shared.push_back(with_shared);
    streams.push_back(with_streams);
    ratios.push_back(with_streams / with_shared);
    std::printf("round %lld: training s per run: shared generator %.2f, own streams %.2f, ratio %.3f\n",
                static_cast<long long>(round), with_shared, with_streams, with_streams / with_shared);
  }
  std::printf("median: training s per run: shared generator %.2f, own streams %.2f; ratio streams / shared %.3f\n",
              median(shared), median(streams), median(ratios));
  std::filesystem::remove_all(folder);
  return 0;
}
