// descentlab-cli inspect RUN.h5 [--json]: what a run file holds, without loading any tensor data.
// descentlab-cli pack RUN.h5 OUT.h5: the run (its file and the log beside it) as one file to share.
// descentlab-cli annotate RUN.h5 [--name N] [--tag T]... [--untag T]... [--note TEXT]: a person's name, tags and note.

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "app/cli/commands.h"
#include "core/record/sweep_statistics.h"
#include "core/store/annotate_run.h"
#include "core/store/durable_file.h"
#include "core/store/parent_check.h"
#include "core/store/run_reader.h"
#include "core/store/run_writer.h"

namespace descentlab::cli {
namespace {

struct InspectOptions {
  std::string path;
  bool json = false;
};

nlohmann::json parse_config(const std::string& text) {
  nlohmann::json config = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  return config.is_discarded() ? nlohmann::json(text) : config;  // keep unparsable text as a string
}

nlohmann::json summarize(const store::RunReader& reader) {
  const auto& header = reader.header();
  nlohmann::json summary = {{"path", reader.path()},
                            {"format_version", header.format_version},
                            {"app_version", header.app_version},
                            {"torch_version", header.torch_version},
                            {"device", header.device},
                            {"created", header.created},
                            {"config", parse_config(header.config_json)}};
  if (!header.run_id.empty()) summary["run_id"] = header.run_id;
  if (!header.annotation.name.empty()) summary["name"] = header.annotation.name;
  if (!header.annotation.tags.empty()) summary["tags"] = header.annotation.tags;
  if (!header.annotation.note.empty()) summary["note"] = header.annotation.note;
  if (header.lineage) {
    summary["lineage"] = {{"parent_file", header.lineage->parent_file},
                          {"parent_run_id", header.lineage->parent_run_id},
                          {"parent_checkpoint_sha256", header.lineage->parent_checkpoint_sha256},
                          {"branch_step", header.lineage->branch_step},
                          {"changes", header.lineage->changes},
                          {"parent_problem", store::parent_problem(*header.lineage)}};
  }
  // A run of a user's module: the files it was made from, as they were at its start (the module's copy included).
  nlohmann::json inputs = nlohmann::json::object();
  for (const auto& [role, file] :
       {std::pair<const char*, const std::optional<store::RunInputFile>*>{"model", &header.model_file},
        {"data", &header.data_file}}) {
    if (*file) inputs[role] = {{"path", (*file)->path}, {"bytes", (*file)->bytes}, {"sha256", (*file)->sha256}};
  }
  if (!inputs.empty()) summary["inputs"] = inputs;
  nlohmann::json metrics = nlohmann::json::object();
  for (const auto& name : reader.metric_names()) {
    const auto series = reader.metric(name);
    nlohmann::json entry = {
        {"rows", series.rows()}, {"width", series.width}, {"kind", record::shape_word(series.shape)}};
    if (series.rows() > 0) {
      entry["last_step"] = series.steps.back();
      const auto last = series.values.end() - series.width;
      entry["last"] = series.shape == record::SeriesShape::Scalar
                          ? nlohmann::json(*last)
                          : nlohmann::json(std::vector<double>(last, series.values.end()));
    }
    metrics[name] = entry;
  }
  summary["metrics"] = metrics;
  nlohmann::json histograms = nlohmann::json::object();
  for (const auto& name : reader.histogram_names()) {
    const auto series = reader.histogram(name);
    histograms[name] = {{"snapshots", series.steps.size()},
                        {"bins", series.bins()},
                        {"last_step", series.steps.empty() ? nlohmann::json() : nlohmann::json(series.steps.back())}};
  }
  summary["histograms"] = histograms;
  nlohmann::json checkpoints = nlohmann::json::array();
  for (const auto& info : reader.checkpoints()) {
    checkpoints.push_back(
        {{"label", info.label}, {"step", info.step}, {"epoch", info.epoch}, {"created", info.created}});
  }
  summary["checkpoints"] = checkpoints;
  // Format 5: where the checkpoints' tensors are (a data file per kept checkpoint, beside the run file).
  nlohmann::json data_files = nlohmann::json::array();
  for (const auto& file : reader.checkpoint_data_files()) {
    std::error_code status;
    const auto bytes = std::filesystem::file_size(file, status);
    data_files.push_back({{"path", file}, {"bytes", status ? nlohmann::json() : nlohmann::json(bytes)}});
  }
  summary["checkpoint_data_files"] = data_files;
  nlohmann::json sweeps = nlohmann::json::object();
  for (const auto& name : reader.sweep_names()) {
    const auto sweep = reader.sweep(name);
    std::vector<double> mean;
    for (const auto& row : record::sweep_statistics(sweep)) mean.push_back(row.metric.mean);
    sweeps[name] = {{"noise", sweep.noise}, {"metric", sweep.metric_name},
                    {"gamma", sweep.gamma}, {"seeds", sweep.seeds},
                    {"mean", mean},         {"layers", sweep.layers}};
  }
  summary["sweeps"] = sweeps;
  return summary;
}

void print_text(const nlohmann::json& summary) {
  std::printf("run file:  %s\n", summary["path"].get<std::string>().c_str());
  std::printf("written:   %s by DescentLab %s (LibTorch %s, %s), format %lld\n",
              summary["created"].get<std::string>().c_str(), summary["app_version"].get<std::string>().c_str(),
              summary["torch_version"].get<std::string>().c_str(), summary["device"].get<std::string>().c_str(),
              static_cast<long long>(summary["format_version"].get<int64_t>()));
  if (summary.contains("name")) std::printf("name:      %s\n", summary["name"].get<std::string>().c_str());
  if (summary.contains("tags")) {
    std::printf("tags:      %s\n", store::tags_text(summary["tags"].get<std::vector<std::string>>()).c_str());
  }
  if (summary.contains("note")) std::printf("note:      %s\n", summary["note"].get<std::string>().c_str());
  if (summary.contains("lineage")) {
    const auto& lineage = summary["lineage"];
    std::printf("branch of: %s (run %s) at step %s: %s\n", lineage["parent_file"].get<std::string>().c_str(),
                lineage["parent_run_id"].get<std::string>().c_str(), lineage["branch_step"].dump().c_str(),
                lineage["changes"].get<std::string>().empty() ? "nothing changed"
                                                              : lineage["changes"].get<std::string>().c_str());
    const std::string problem = lineage["parent_problem"].get<std::string>();
    std::printf("parent:    %s\n", problem.empty() ? "there, as branched" : problem.c_str());
  }
  std::printf("config:    %s\n", summary["config"].dump().c_str());
  if (summary.contains("inputs")) {
    for (const auto& [role, file] : summary["inputs"].items()) {
      std::printf("%-10s %s (%s bytes, SHA-256 %s)%s\n", (role + ":").c_str(), file["path"].get<std::string>().c_str(),
                  file["bytes"].dump().c_str(), file["sha256"].get<std::string>().c_str(),
                  role == "model" ? ", a copy kept with the run" : "");
    }
  }
  std::printf("\nmetrics (%zu):\n", summary["metrics"].size());
  for (const auto& [name, entry] : summary["metrics"].items()) {
    std::printf("  %-24s %6lld rows  last step %-8s last %s\n", name.c_str(),
                static_cast<long long>(entry["rows"].get<int64_t>()),
                entry.contains("last_step") ? entry["last_step"].dump().c_str() : "-",
                entry.contains("last") ? entry["last"].dump().c_str() : "-");
  }
  std::printf("\nhistograms (%zu):\n", summary["histograms"].size());
  for (const auto& [name, entry] : summary["histograms"].items()) {
    std::printf("  %-24s %s snapshots of %s bins\n", name.c_str(), entry["snapshots"].dump().c_str(),
                entry["bins"].dump().c_str());
  }
  std::printf("\ncheckpoints (%zu):\n", summary["checkpoints"].size());
  for (const auto& entry : summary["checkpoints"]) {
    std::printf("  %-24s step %s, epoch %s, %s\n", entry["label"].get<std::string>().c_str(),
                entry["step"].dump().c_str(), entry["epoch"].dump().c_str(),
                entry["created"].get<std::string>().c_str());
  }
  for (const auto& file : summary["checkpoint_data_files"]) {
    std::printf("  data in %s (%s)\n", file["path"].get<std::string>().c_str(),
                file["bytes"].is_null() ? "missing" : store::megabytes_text(file["bytes"].get<long long>()).c_str());
  }
  std::printf("\nsweeps (%zu):\n", summary["sweeps"].size());
  for (const auto& [name, entry] : summary["sweeps"].items()) {
    std::printf("  %-24s %s noise, mean %s over %zu seeds at gamma %s: %s\n", name.c_str(),
                entry["noise"].get<std::string>().c_str(), entry["metric"].get<std::string>().c_str(),
                entry["seeds"].size(), entry["gamma"].dump().c_str(), entry["mean"].dump().c_str());
  }
}

}  // namespace

void add_inspect_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<InspectOptions>();
  CLI::App* inspect = app.add_subcommand(
      "inspect", "Summarize a run file: configuration, last value of every metric, checkpoints, sweeps");
  inspect->add_option("run", options->path, "The run file (.h5)")->required();
  inspect->add_flag("--json", options->json, "Print JSON instead of text");
  inspect->callback([options, &exit_code]() {
    const store::RunReader reader(options->path);
    const nlohmann::json summary = summarize(reader);
    if (options->json) {
      std::cout << summary.dump(2) << "\n";
    } else {
      print_text(summary);
    }
    exit_code = 0;
  });
}

void add_pack_command(CLI::App& app, int& exit_code) {
  auto paths = std::make_shared<std::pair<std::string, std::string>>();
  auto options = std::make_shared<store::PackOptions>();
  CLI::App* pack = app.add_subcommand(
      "pack", "Write a run as one file to share: its run file with the records of its log (RUN.h5.log) folded in");
  pack->add_option("run", paths->first, "The run file (.h5), finished or still being written")->required();
  pack->add_option("out", paths->second,
                   "The file to write (.h5); h5py reads it whole. Never the run or a file of a run's own (its log, "
                   "lock or checkpoint data)")
      ->required();
  pack->add_flag(
      "--overwrite", options->overwrite,
      "Replace OUT if it exists (a run there: its lock is taken and its log and checkpoint data go with it)");
  pack->callback([paths, options, &exit_code]() {
    const store::PackResult packed = store::pack_run(paths->first, paths->second, *options);
    std::printf("packed %s into %s: %s, %zu log record%s folded in\n", paths->first.c_str(), paths->second.c_str(),
                store::megabytes_text(static_cast<long long>(packed.bytes)).c_str(), packed.log_records,
                packed.log_records == 1 ? "" : "s");
    if (!packed.warning.empty()) std::fprintf(stderr, "descentlab-cli: warning: %s\n", packed.warning.c_str());
    exit_code = 0;
  });
}

struct AnnotateOptions {
  std::string path;
  std::optional<std::string> name, note;
  std::vector<std::string> tags, untags;
  bool clear = false;
};

void add_annotate_command(CLI::App& app, int& exit_code) {
  auto options = std::make_shared<AnnotateOptions>();
  CLI::App* annotate = app.add_subcommand(
      "annotate",
      "Give a run your own name, tags and a note, kept in its run file: the window shows the name in place of the "
      "automatic one, and the window's and compare's filters find the tags (tag=baseline) and words of the note");
  annotate->add_option("run", options->path, "The run file (.h5); not one another process is writing")->required();
  annotate->add_option("--name", options->name, "Its name (\"\": named by its configuration again)");
  annotate->add_option("--tag", options->tags, "A tag to add (repeat for several)");
  annotate->add_option("--untag", options->untags, "A tag to remove (repeat for several)");
  annotate->add_option("--note", options->note, "Its note (\"\": none), replacing the one before");
  annotate->add_flag("--clear", options->clear, "Remove the name, every tag and the note first");
  annotate->callback([options, &exit_code]() {
    store::RunAnnotation wanted =
        options->clear ? store::RunAnnotation{} : store::RunReader(options->path).header().annotation;
    if (options->name) wanted.name = *options->name;
    if (options->note) wanted.note = *options->note;
    for (const auto& tag : options->untags) {
      wanted.tags.erase(std::remove(wanted.tags.begin(), wanted.tags.end(), tag), wanted.tags.end());
    }
    wanted.tags.insert(wanted.tags.end(), options->tags.begin(), options->tags.end());
    const store::RunAnnotation stored = store::annotate_run(options->path, wanted);
    std::printf("%s: name %s, tags %s, note %s\n", options->path.c_str(),
                stored.name.empty() ? "(by its configuration)" : ("\"" + stored.name + "\"").c_str(),
                stored.tags.empty() ? "(none)" : store::tags_text(stored.tags).c_str(),
                stored.note.empty() ? "(none)" : ("\"" + stored.note + "\"").c_str());
    exit_code = 0;
  });
}

}  // namespace descentlab::cli
