#include "core/session/data_export.h"

#include <torch/torch.h>

#include <algorithm>

#include "core/config/json_reader.h"
#include "core/data/catalog.h"
#include "core/data/data_file_writer.h"
#include "core/tasks/builtin_data.h"

namespace descentlab::session {
namespace {

std::string known_datasets_text() {
  std::string known;
  for (const auto& name : exportable_datasets()) known += (known.empty() ? "" : ", ") + name;
  return known;
}

// The request's experiment: its preset (or config file) at its size, for a vit preset on the request's dataset,
// then the --set overrides; refused when it trains on another dataset.
config::ExperimentConfig export_config(const DataExportRequest& request) {
  const auto& known = exportable_datasets();
  if (std::find(known.begin(), known.end(), request.dataset) == known.end()) {
    throw config::ConfigError("data export", "",
                              "unknown dataset \"" + request.dataset + "\" (known: " + known_datasets_text() + ")");
  }
  if (!request.preset.empty() && !request.config_file.empty()) {
    throw config::ConfigError("data export", "--config", "give --preset or --config, not both");
  }
  const std::string preset =
      request.config_file.empty() && request.preset.empty() ? default_export_preset(request.dataset) : request.preset;
  std::vector<std::string> overrides;
  const bool images = request.dataset == "mnist" || request.dataset == "fashion-mnist";
  if (images && request.config_file.empty() &&
      config::preset_document(preset, request.size).value("task", "") == "vit") {
    overrides.push_back("data.dataset=" + request.dataset);  // the vit presets read either image set
  }
  overrides.insert(overrides.end(), request.overrides.begin(), request.overrides.end());
  const config::ExperimentConfig config = config::load_experiment(preset, request.size, request.config_file, overrides);
  const std::string trains_on = config::dataset_of(config);
  if (trains_on != request.dataset) {
    const std::string source = request.config_file.empty() ? "preset " + preset : request.config_file;
    throw config::ConfigError(source, "task",
                              "trains on " + (trains_on.empty() ? "generated data" : "\"" + trains_on + "\"") +
                                  ", not on \"" + request.dataset + "\"; export " + request.dataset + " with preset " +
                                  default_export_preset(request.dataset));
  }
  return config;
}

// The tensors as the writer takes them: row-major values and their shapes (float32 or int64).
data::DataArrayValues values_of(const std::string& name, const torch::Tensor& tensor) {
  data::DataArrayValues values;
  values.name = name;
  values.shape = tensor.sizes().vec();
  if (tensor.scalar_type() == torch::kFloat32) {
    values.floats = tensor.data_ptr<float>();
  } else {
    values.integers = tensor.data_ptr<int64_t>();
  }
  return values;
}

}  // namespace

const std::vector<std::string>& exportable_datasets() {
  static const std::vector<std::string> names = {"fashion-mnist", "mnist", "moby-dick", "imdb"};
  return names;
}

std::string default_export_preset(const std::string& dataset) {
  if (dataset == "moby-dick") return "gpt-adamw";
  if (dataset == "imdb") return "text-erm";
  return "vit-adamw";
}

DataExportOutcome export_dataset(const DataExportRequest& request) {
  if (request.out.empty()) throw config::ConfigError("data export", "OUT", "name the data file to write");
  const config::ExperimentConfig config = export_config(request);
  data::refuse_existing_output(request.out, request.overwrite);  // before the data is read, which takes a while
  const std::string root = request.data_root.empty() ? data::default_data_root() : request.data_root;
  data::verify_dataset(root, request.dataset);  // what a run checks first: present, and every checksum as listed
  torch::NoGradGuard no_grad;
  const tasks::BuiltinData built = tasks::builtin_data(config, root);
  data::DataFileContents contents;
  contents.task = built.task;
  contents.classes = built.classes;
  contents.vocabulary = built.vocabulary;
  contents.name = request.dataset;
  contents.characters = built.characters;
  contents.arrays = {values_of("train/x", built.train_x), values_of("train/y", built.train_y),
                     values_of("test/x", built.test_x), values_of("test/y", built.test_y)};
  data::write_data_file(request.out, contents, request.overwrite);
  return {config.name, built.description};
}

}  // namespace descentlab::session
