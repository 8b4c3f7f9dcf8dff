// Naming a run (issue 54: its name, tags and note kept in its run file), against the run's size. Each run file has 20
// scalar series of ROWS rows, finished (folded, no log). Measured in this one process, medians of REPEATS:
//   annotate: store::annotate_run, what the window and `descentlab-cli annotate` do on a run no writer holds
//             (one log record, appended and fsynced);
//   rewrite:  the baseline, the same annotation through a writer that folds it into a new version of the run file
//             (RunWriter::open, annotate, close), which is what storing it without the log would cost.
// Usage: descentlab_bench_annotate [--rows 1000,10000,100000] [--repeats 5] [--folder DIR]   (docs/benchmarks.md)

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "core/store/annotate_run.h"
#include "core/store/run_log.h"
#include "core/store/run_writer.h"

namespace {

namespace fs = std::filesystem;
using namespace descentlab;
using Clock = std::chrono::steady_clock;

template <typename Action>
double median_ms(int repeats, Action action) {
  std::vector<double> times;
  for (int i = 0; i < repeats; ++i) {
    const auto start = Clock::now();
    action(i);
    times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

void write_run(const std::string& path, int64_t rows) {
  store::RunHeader header;
  header.app_version = "bench";
  header.torch_version = "-";
  header.device = "cpu";
  header.config_json = "{}";
  store::RunWriterOptions options;
  options.flush_interval_seconds = 0;
  options.overwrite = true;
  auto writer = store::RunWriter::create(path, header, options);
  for (int series = 0; series < 20; ++series) {
    const std::string name = "series_" + std::to_string(series);
    for (int64_t step = 1; step <= rows; ++step) writer->scalar(name, step, 0.0, 1.0 / static_cast<double>(step));
  }
}

store::RunAnnotation annotation(int i) {
  store::RunAnnotation named;
  named.name = "warm-up baseline " + std::to_string(i);
  named.tags = {"baseline", "keep"};
  named.note = "what this run is for";
  return named;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int64_t> sizes = {1000, 10000, 100000};
  int repeats = 5;
  std::string folder = (fs::temp_directory_path() / "descentlab-annotate-bench").string();
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--rows") {
      sizes.clear();
      std::stringstream list(argv[i + 1]);
      for (std::string item; std::getline(list, item, ',');) sizes.push_back(std::stoll(item));
    } else if (flag == "--repeats") {
      repeats = std::stoi(argv[i + 1]);
    } else if (flag == "--folder") {
      folder = argv[i + 1];
    }
  }
  fs::create_directories(folder);
  std::printf(
      "| rows per series (20 series) | run file (MB) | annotate (ms) | log bytes added | rewrite (ms) | annotate / "
      "rewrite |\n");
  std::printf("|---|---|---|---|---|---|\n");
  for (const int64_t rows : sizes) {
    const std::string path = folder + "/run-" + std::to_string(rows) + ".h5";
    write_run(path, rows);
    const double megabytes = static_cast<double>(fs::file_size(path)) / 1e6;
    const double annotate = median_ms(repeats, [&](int i) { store::annotate_run(path, annotation(i)); });
    const auto log_bytes = fs::file_size(store::log_path_for(path));
    const double per_record = static_cast<double>(log_bytes - store::kLogHeaderBytes) / repeats;
    store::RunWriterOptions options;
    options.flush_interval_seconds = 0;
    const double rewrite = median_ms(repeats, [&](int i) {
      auto writer = store::RunWriter::open(path, options);
      writer->annotate(annotation(i));
      writer->flush();
    });
    std::printf("| %lld | %.1f | %.2f | %.0f | %.2f | %.3f |\n", static_cast<long long>(rows), megabytes, annotate,
                per_record, rewrite, annotate / rewrite);
    fs::remove(path);
    fs::remove(store::log_path_for(path));
  }
  return 0;
}
