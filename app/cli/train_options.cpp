#include "app/cli/train_options.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <utility>

#include "core/config/json_reader.h"
#include "core/data/data_file.h"
#include "core/record/checkpoint.h"
#include "core/store/run_reader.h"

namespace descentlab::cli {

void check_resume_options(const TrainOptions& options, bool read_run) {
  if (!options.preset.empty() || !options.config_file.empty() || !options.overrides.empty() || options.size_given ||
      !options.out.empty() || options.overwrite || !options.optimizer.empty() || options.layerwise) {
    throw config::ConfigError(
        "--resume", "",
        "a resumed run keeps its own configuration and run file; drop "
        "--preset/--size/--config/--layerwise/--optimizer/--set/--out/--overwrite (--model and --data say "
        "where a run's own module and data file are now)");
  }
  if (options.max_steps < 0 || !read_run) return;
  const store::RunReader reader(options.resume);
  for (const auto& checkpoint : reader.checkpoints()) {
    if (checkpoint.label == record::checkpoint_label::kLatest && options.max_steps < checkpoint.step) {
      throw config::ConfigError(
          "--max-steps", "",
          std::to_string(options.max_steps) + " is below step " + std::to_string(checkpoint.step) + ", where " +
              options.resume + " stands (its \"latest\" checkpoint): give at least " + std::to_string(checkpoint.step));
    }
  }
}

std::string absolute_or_empty(const std::string& path) {
  return path.empty() ? path : std::filesystem::absolute(path).lexically_normal().string();
}

config::ExperimentConfig experiment_of(const TrainOptions& options) {
  const int sources = !options.preset.empty() + !options.config_file.empty() +
                      (!options.model_file.empty() || !options.data_file.empty());
  if (sources != 1) {
    throw config::ConfigError("train", "",
                              "give exactly one of --preset NAME, --config FILE, or --model M.pt with --data D.h5");
  }
  std::vector<std::string> overrides;
  if (!options.optimizer.empty()) overrides.push_back("optimizer.name=" + options.optimizer);
  overrides.insert(overrides.end(), options.overrides.begin(), options.overrides.end());
  if (options.layerwise && options.model_file.empty()) {
    throw config::ConfigError("train", "--layerwise",
                              "applies to a model of your own (--model M.pt --data D.h5); a preset's task says its "
                              "engine");
  }
  if (options.model_file.empty() && options.data_file.empty()) {
    return config::load_experiment(options.preset, options.size, options.config_file, overrides);
  }
  if (options.model_file.empty() || options.data_file.empty()) {
    throw config::ConfigError("train", options.model_file.empty() ? "--model" : "--data",
                              "a model of your own trains on data of your own: give both --model M.pt and --data D.h5");
  }
  namespace fs = std::filesystem;
  const std::string model = fs::absolute(options.model_file).lexically_normal().string();
  const std::string data = fs::absolute(options.data_file).lexically_normal().string();
  nlohmann::json document = {{"name", fs::path(model).stem().string()},
                             {"task", options.layerwise ? "torchscript-layerwise" : "torchscript"},
                             {"model", {{"file", model}}},
                             {"data", {{"file", data}, {"target", data::data_task_word(data::read_data_task(data))}}}};
  for (const auto& assignment : overrides) config::apply_assignment(document, assignment);
  return config::ExperimentConfig::from_json(document, "--model " + options.model_file + " --data " +
                                                           options.data_file +
                                                           (overrides.empty() ? "" : " with --optimizer/--set"));
}

BranchRequest branch_request(const TrainOptions& options) {
  const std::pair<const char*, bool> conflicting[] = {
      {"--resume", !options.resume.empty()},
      {"--preset", !options.preset.empty()},
      {"--config", !options.config_file.empty()},
      {"--optimizer", !options.optimizer.empty()},
      {"--nproc", options.nproc > 1},
  };
  // --model and --data are where the parent's own files are now (a user's module run), as for --resume.
  for (const auto& [flag, given] : conflicting) {
    if (given) {
      throw config::ConfigError("train", flag,
                                "a branch continues its parent's experiment: change its settings with --set "
                                "KEY=VALUE instead");
    }
  }
  if (options.out.empty()) throw config::ConfigError("train", "--out", "the child's run file to write is required");
  BranchRequest request;
  request.parent = options.branch;
  const auto at = options.branch.rfind('@');
  if (at != std::string::npos && at + 1 < options.branch.size() &&
      options.branch.find_first_not_of("0123456789", at + 1) == std::string::npos) {
    request.parent = options.branch.substr(0, at);
    request.step = std::stoll(options.branch.substr(at + 1));
  }
  const store::RunReader parent(request.parent);
  nlohmann::json document = nlohmann::json::parse(parent.header().config_json, nullptr, false);
  if (!document.is_object()) {
    throw store::RunFileError(store::RunFileError::Kind::Corrupt, request.parent, "/@config", "is not a JSON object");
  }
  for (const auto& assignment : options.overrides) config::apply_assignment(document, assignment);
  request.config = config::ExperimentConfig::from_json(
      document, request.parent + " (its configuration" + (options.overrides.empty() ? ")" : " with --set)"));
  return request;
}

}  // namespace descentlab::cli
