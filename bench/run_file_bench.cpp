// Run-file benchmark: checkpoint save and load time and file size against torch::save / torch::load of the same
// model, and metric appends per second, all measured in this one process.
// Usage: descentlab_bench_run_file [--repeats N] [--folder DIR]     (results go to docs/benchmarks.md)
//        descentlab_bench_run_file --commit-scale 1,10,100,500 [--repeats N] [--folder DIR]
//          a metric interval's commit (the run log) against a fold of the same rows (a commit with a checkpoint),
//          on run files holding a checkpoint of each size in MB, and the checkpoint's save against torch::save
//          (with and without its fsync), with the extra peak memory of each
//        descentlab_bench_run_file --open-scale 30,300 [--folder DIR]
//          opening a folder of run files one after another (time and memory for 30 and for 300)

#include <torch/torch.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
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

  double data_files = 0;                            // the checkpoints' data files beside the run file (format 5)
#if __has_include("core/store/checkpoint_files.h")  // built in an older tree by bench/run_file_scale.sh: none
  for (const auto& file : store::RunReader(run_path).checkpoint_data_files()) {
    data_files += static_cast<double>(fs::file_size(file));
  }
#endif
  const double run_bytes = static_cast<double>(fs::file_size(run_path) - metrics_only_size) + data_files;
  const double torch_bytes = static_cast<double>(fs::file_size(torch_path));
  std::printf("| %s (%.2f M parameters) | save | %.1f ms | %.1f ms | %.2f |\n", label,
              static_cast<double>(parameter_count(*model)) / 1e6, 1e3 * run_save, 1e3 * torch_save,
              run_save / torch_save);
  std::printf("| | load | %.1f ms | %.1f ms | %.2f |\n", 1e3 * run_load, 1e3 * torch_load, run_load / torch_load);
  std::printf("| | size | %.2f MB (run file %.2f MB with 10k metric rows, data file %.2f MB) | %.2f MB | %.3f |\n",
              run_bytes / 1e6, static_cast<double>(fs::file_size(run_path)) / 1e6, data_files / 1e6, torch_bytes / 1e6,
              run_bytes / torch_bytes);
  writer.reset();
  fs::remove(run_path);
  fs::remove_all(run_path + ".checkpoints");
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

// Resident and peak resident memory of this process in bytes (/proc/self/status VmRSS, VmHWM). Its own copy of
// resident_memory() (core/util/system_memory.h): bench/run_file_scale.sh builds this file in older trees too.
std::pair<long long, long long> resident_and_peak() {
  std::ifstream status("/proc/self/status");
  std::string line;
  long long rss = 0, peak = 0;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) rss = std::stoll(line.substr(6)) * 1024;
    if (line.rfind("VmHWM:", 0) == 0) peak = std::stoll(line.substr(6)) * 1024;
  }
  return {rss, peak};
}

// Resets the peak (VmHWM) to the current resident size; false where the kernel does not allow it.
bool reset_peak() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";
  clear.flush();
  return static_cast<bool>(clear);
}

// Seconds and extra peak bytes of `action` (median seconds; the largest extra peak over the repeats).
template <typename Action>
std::pair<double, long long> timed_with_memory(int repeats, Action action) {
  std::vector<double> times;
  long long extra = 0;
  for (int i = 0; i < repeats; ++i) {
    reset_peak();
    const long long before = resident_and_peak().first;
    const auto start = Clock::now();
    action();
    times.push_back(seconds_since(start));
    extra = std::max(extra, resident_and_peak().second - before);
  }
  std::sort(times.begin(), times.end());
  return {times[times.size() / 2], extra};
}

// One metric interval of a training run: 20 series (8 of them per-layer vectors of 12) over 10 steps.
void queue_metric_interval(store::RunWriter& writer, int64_t first_step) {
  for (int64_t step = first_step; step < first_step + 10; ++step) {
    for (int s = 0; s < 12; ++s) writer.scalar("scalar_" + std::to_string(s), step, 0.0, 1.0);
    for (int s = 0; s < 8; ++s) writer.vector("vector_" + std::to_string(s), step, 0.0, std::vector<double>(12, 0.5));
  }
}

void commit_scale(const std::string& folder, const std::vector<int>& megabytes, int repeats) {
  std::printf(
      "Commit cost against the checkpoints a run file holds (median of %d; extra peak memory over the "
      "resident size before the commit):\n\n",
      repeats);
  std::printf(
      "| checkpoint | metric interval: run log | same rows with a tiny checkpoint (a fold) | ratio | "
      "checkpoint save (extra peak memory / checkpoint) | of which: copy, write | first 3 saves: slowest | "
      "torch::save | ratio | torch::save + fsync | ratio |\n|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const int size : megabytes) {
    const std::string run_path = folder + "/bench-scale.h5";
    const std::string torch_path = folder + "/bench-scale.pt";
    const int64_t elements = static_cast<int64_t>(size) * 1024 * 1024 / 4;
    torch::manual_seed(0);
    const torch::Tensor weights = torch::randn({elements});
    record::CheckpointData checkpoint;
    checkpoint.step = 1;
    record::TensorBlob blob;
    blob.dtype = "float32";
    blob.shape = {elements};
    blob.bytes.assign(static_cast<const char*>(weights.data_ptr()),
                      static_cast<const char*>(weights.data_ptr()) + elements * 4);
    checkpoint.sections["model"]["weights"] = std::move(blob);

    store::RunWriterOptions options;
    options.flush_interval_seconds = 0;
    options.overwrite = true;
    auto writer = store::RunWriter::create(run_path, {}, options);
    int64_t step = 0;
    // The save as a trainer makes it: the tensor copied into the checkpoint's plain data (train::to_blob), then
    // written.
    const auto captured = [&] {
      record::CheckpointData copied;
      copied.step = checkpoint.step;
      copied.sections["model"]["weights"] = train::to_blob(weights);
      return copied;
    };
    // The first saves of a process are slower (the kernel assembling huge pages for the copy, the page cache
    // growing to hold the data files): three are timed apart, and the steady cost measured after them.
    double first_saves = 0;
    for (int i = 0; i < 3; ++i) {
      const auto start = Clock::now();
      writer->save_checkpoint("latest", captured());
      first_saves = std::max(first_saves, seconds_since(start));
    }
    const auto [save, save_memory] =
        timed_with_memory(std::max(1, repeats / 2), [&] { writer->save_checkpoint("latest", captured()); });
    // Its two parts: the copy alone, and the writer's part (the data handed over, already copied).
    const double copy = median_seconds(std::max(1, repeats / 2), [&] { (void)captured(); });
    std::vector<double> writes;
    for (int i = 0; i < std::max(1, repeats / 2); ++i) {
      record::CheckpointData copied = captured();
      const auto start = Clock::now();
      writer->save_checkpoint("latest", std::move(copied));
      writes.push_back(seconds_since(start));
    }
    std::sort(writes.begin(), writes.end());
    const double write = writes[writes.size() / 2];
    const double torch_save = median_seconds(std::max(1, repeats / 2), [&] { torch::save(weights, torch_path); });
    // The fair baseline: the checkpoint save is durable when it returns (fdatasync), torch::save is not.
    const double torch_save_synced = median_seconds(std::max(1, repeats / 2), [&] {
      torch::save(weights, torch_path);
      std::FILE* saved = std::fopen(torch_path.c_str(), "rb");
      if (saved) {
        (void)fsync(fileno(saved));
        std::fclose(saved);
      }
    });
    const auto [logged, logged_memory] = timed_with_memory(repeats, [&] {
      queue_metric_interval(*writer, step);
      step += 10;
      writer->flush();
    });
    record::CheckpointData tiny;
    tiny.step = step;
    tiny.sections["model"]["w"] = checkpoint.sections["model"]["weights"];
    tiny.sections["model"]["w"].shape = {1};
    tiny.sections["model"]["w"].bytes.resize(4);
    const auto [folded, folded_memory] = timed_with_memory(std::max(1, repeats / 2), [&] {
      queue_metric_interval(*writer, step);
      step += 10;
      writer->save_checkpoint("tiny", record::CheckpointData(tiny));  // a fold: the whole file rewritten
    });
    std::printf(
        "| %d MB (run file %.2f MB) | %.1f ms, +%.1f MB | %.0f ms, +%.0f MB | %.0fx | %.0f ms, +%.0f MB (%.2f) | "
        "%.0f ms, %.0f ms | %.0f ms | %.0f ms | %.2f | %.0f ms | %.2f |\n",
        size, static_cast<double>(fs::file_size(run_path)) / 1e6, 1e3 * logged,
        static_cast<double>(logged_memory) / 1e6, 1e3 * folded, static_cast<double>(folded_memory) / 1e6,
        folded / logged, 1e3 * save, static_cast<double>(save_memory) / 1e6,
        static_cast<double>(save_memory) / (static_cast<double>(size) * 1048576.0), 1e3 * copy, 1e3 * write,
        1e3 * first_saves, 1e3 * torch_save, save / torch_save, 1e3 * torch_save_synced, save / torch_save_synced);
    std::fflush(stdout);
    writer.reset();
    fs::remove(run_path);
    fs::remove_all(run_path + ".checkpoints");
    fs::remove_all(run_path + ".checkpoints");
    fs::remove(torch_path);
  }
}

// Opening a folder of run files (issue 34's "300 run files"): `count` runs, each with 500 rows of 20 series and a
// "best" and a "latest" checkpoint of a small model's shape (40 tensors, 1 MB), opened one after another the way a
// runs table reads them: the reader, the series names, the last loss, the checkpoints' list. Time and extra peak
// memory for all of them, and per run.
void open_scale(const std::string& folder, const std::vector<int>& counts) {
  std::printf("Opening run files (reader, series names, last loss, checkpoint list), one after another:\n\n");
  std::printf("| runs | open all | per run | extra peak memory |\n|---|---|---|---|\n");
  record::CheckpointData checkpoint;
  for (int t = 0; t < 40; ++t) {
    record::TensorBlob blob;
    blob.dtype = "float32";
    blob.shape = {64, 100};
    blob.bytes.assign(64 * 100 * 4, static_cast<uint8_t>(t));
    checkpoint.sections[t < 20 ? "model" : "optimizer"]["tensor." + std::to_string(t)] = blob;
  }
  for (const int count : counts) {
    const std::string runs = folder + "/bench-open-" + std::to_string(count);
    fs::remove_all(runs);
    fs::create_directories(runs);
    std::vector<std::string> paths;
    for (int r = 0; r < count; ++r) {
      paths.push_back(runs + "/run-" + std::to_string(r) + ".h5");
      store::RunWriterOptions options;
      options.flush_interval_seconds = 0;
      auto writer = store::RunWriter::create(paths.back(), {}, options);
      for (int64_t step = 0; step < 500; step += 10) queue_metric_interval(*writer, step);
      writer->save_checkpoints({"best", "latest"}, record::CheckpointData(checkpoint));
    }
    const auto [seconds, memory] = timed_with_memory(1, [&] {
      size_t seen = 0;
      for (const auto& path : paths) {
        const store::RunReader reader(path);
        seen += reader.metric_names().size() + reader.checkpoints().size();
        seen += reader.metric("scalar_0").rows();
      }
      if (seen == 0) std::printf("nothing read\n");
    });
    std::printf("| %d | %.0f ms | %.2f ms | +%.1f MB |\n", count, 1e3 * seconds, 1e3 * seconds / count,
                static_cast<double>(memory) / 1e6);
    std::fflush(stdout);
    fs::remove_all(runs);
  }
}

}  // namespace

int main(int argc, char** argv) {
  int repeats = 5;
  std::string folder = fs::temp_directory_path().string();
  std::vector<int> scale, open_counts;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--repeats") repeats = std::stoi(argv[i + 1]);
    if (flag == "--folder") folder = argv[i + 1];
    if (flag == "--open-scale") {
      std::stringstream list(argv[i + 1]);
      for (std::string item; std::getline(list, item, ',');) open_counts.push_back(std::stoi(item));
    }
    if (flag == "--commit-scale") {
      std::stringstream list(argv[i + 1]);
      for (std::string item; std::getline(list, item, ',');) scale.push_back(std::stoi(item));
    }
  }
  descentlab::configure_process(1);
  if (!open_counts.empty()) {
    open_scale(folder, open_counts);
    return 0;
  }
  if (!scale.empty()) {
    commit_scale(folder, scale, repeats);
    return 0;
  }
  std::printf("Checkpoint save/load (median of %d), run file vs torch::save/torch::load, same model:\n\n", repeats);
  std::printf("| model | what | run file | torch | ratio run/torch |\n|---|---|---|---|---|\n");
  compare_checkpoints(folder, "small: 4 x Linear(256)", 256, 4, repeats);
  compare_checkpoints(folder, "medium: 8 x Linear(1024)", 1024, 8, repeats);
  std::printf("\nMetric appends:\n\n| what | rate | time |\n|---|---|---|\n");
  metric_appends(folder);
  return 0;
}
