// Run-file benchmark: checkpoint save and load time and file size against torch::save / torch::load of the same
// model, and metric appends per second, all measured in this one process.
// Usage: descentlab_bench_run_file [--repeats N] [--folder DIR]     (results go to docs/benchmarks.md)

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "core/runtime.h"
#include "core/store/run_reader.h"
#include "core/store/run_writer.h"
#include "core/train/checkpoint_tensors.h"

namespace {

namespace fs = std::filesystem;
using namespace descentlab;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

template <typename Action>
double median_seconds(int repeats, Action action) {
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    const auto start = Clock::now();
    action();
    times.push_back(seconds_since(start));
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// A stack of square linear layers with LayerNorm: `layers` x (width^2 + 3 width) parameters.
torch::nn::Sequential make_model(int64_t width, int64_t layers) {
  torch::nn::Sequential model;
  for (int64_t i = 0; i < layers; ++i) {
    model->push_back(torch::nn::Linear(width, width));
    model->push_back(torch::nn::LayerNorm(torch::nn::LayerNormOptions({width})));
  }
  return model;
}

int64_t parameter_count(const torch::nn::Module& module) {
  int64_t count = 0;
  for (const auto& parameter : module.parameters()) count += parameter.numel();
  return count;
}

void compare_checkpoints(const std::string& folder, const char* label, int64_t width, int64_t layers, int repeats) {
  torch::manual_seed(0);
  auto model = make_model(width, layers);
  const std::string run_path = folder + "/bench-run.h5";
  const std::string torch_path = folder + "/bench-model.pt";

  store::RunWriterOptions options;
  options.flush_interval_seconds = 0;
  options.overwrite = true;
  auto writer = store::RunWriter::create(run_path, {}, options);
  for (int64_t step = 0; step < 10000; ++step) {  // a run's worth of metrics, so a save copies a realistic file
    writer->scalar("loss", step, 0.0, 1.0);
    writer->vector("layer_loss", step, 0.0, std::vector<double>(8, 0.5));
  }
  writer->flush();
  const auto metrics_only_size = fs::file_size(run_path);

  const double run_save = median_seconds(repeats, [&] {
    record::CheckpointData checkpoint;
    checkpoint.sections["model"] = train::module_state(*model);
    writer->save_checkpoint("latest", std::move(checkpoint));
  });
  const double torch_save = median_seconds(repeats, [&] { torch::save(model, torch_path); });

  auto target = make_model(width, layers);
  const double run_load = median_seconds(repeats, [&] {
    const store::RunReader reader(run_path);
    train::load_module_state(*target, reader.checkpoint("latest").sections.at("model"), run_path,
                             "/checkpoints/latest/model");
  });
  const double torch_load = median_seconds(repeats, [&] { torch::load(target, torch_path); });
  for (const auto& item : model->named_parameters()) {
    if (!torch::equal(item.value(), target->named_parameters()[item.key()]))
      std::printf("MISMATCH %s\n", item.key().c_str());
  }

  const double run_bytes = static_cast<double>(fs::file_size(run_path) - metrics_only_size);
  const double torch_bytes = static_cast<double>(fs::file_size(torch_path));
  std::printf("| %s (%.2f M parameters) | save | %.1f ms | %.1f ms | %.2f |\n", label,
              static_cast<double>(parameter_count(*model)) / 1e6, 1e3 * run_save, 1e3 * torch_save,
              run_save / torch_save);
  std::printf("| | load | %.1f ms | %.1f ms | %.2f |\n", 1e3 * run_load, 1e3 * torch_load, run_load / torch_load);
  std::printf("| | size | %.2f MB (file %.2f MB with 10k metric rows) | %.2f MB | %.3f |\n", run_bytes / 1e6,
              static_cast<double>(fs::file_size(run_path)) / 1e6, torch_bytes / 1e6, run_bytes / torch_bytes);
  writer.reset();
  fs::remove(run_path);
  fs::remove(torch_path);
}

void metric_appends(const std::string& folder) {
  const std::string path = folder + "/bench-metrics.h5";
  store::RunWriterOptions options;
  options.flush_interval_seconds = 0;
  options.overwrite = true;
  auto writer = store::RunWriter::create(path, {}, options);
  const int64_t appends = 1000000;
  auto start = Clock::now();
  for (int64_t i = 0; i < appends; ++i) writer->scalar("loss", i, 0.0, 1.0 / static_cast<double>(i + 1));
  const double buffered = seconds_since(start);
  start = Clock::now();
  writer->flush();
  const double commit = seconds_since(start);
  std::printf("| scalar appends into the buffer (1,000,000) | %.0f per second | %.1f ns each |\n", appends / buffered,
              1e9 * buffered / appends);
  std::printf("| commit of those 1,000,000 rows to disk | %.0f rows per second | %.0f ms |\n", appends / commit,
              1e3 * commit);

  // A training-like pattern: 20 series (8 of them per-layer vectors) per step, committed every 100 steps.
  start = Clock::now();
  const int64_t steps = 5000;
  for (int64_t step = 0; step < steps; ++step) {
    for (int s = 0; s < 12; ++s) writer->scalar("scalar_" + std::to_string(s), step, 0.0, 1.0);
    for (int s = 0; s < 8; ++s) writer->vector("vector_" + std::to_string(s), step, 0.0, std::vector<double>(12, 0.5));
    if (step % 100 == 99) writer->flush();
  }
  const double pattern = seconds_since(start);
  std::printf(
      "| 20 series x 5,000 steps, a commit every 100 steps (50 commits) | %.0f appends per second | %.2f ms per "
      "step |\n",
      20.0 * steps / pattern, 1e3 * pattern / steps);
  std::printf("\nrun file after the metric benchmark: %.2f MB\n", static_cast<double>(fs::file_size(path)) / 1e6);
  writer.reset();
  fs::remove(path);
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = 5;
  std::string folder = fs::temp_directory_path().string();
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--repeats") repeats = std::stoi(argv[i + 1]);
    if (flag == "--folder") folder = argv[i + 1];
  }
  descentlab::configure_process(1);
  std::printf("Checkpoint save/load (median of %d), run file vs torch::save/torch::load, same model:\n\n", repeats);
  std::printf("| model | what | run file | torch | ratio run/torch |\n|---|---|---|---|---|\n");
  compare_checkpoints(folder, "small: 4 x Linear(256)", 256, 4, repeats);
  compare_checkpoints(folder, "medium: 8 x Linear(1024)", 1024, 8, repeats);
  std::printf("\nMetric appends:\n\n| what | rate | time |\n|---|---|---|\n");
  metric_appends(folder);
  return 0;
}
