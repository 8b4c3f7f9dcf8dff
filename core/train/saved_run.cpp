#include "core/train/saved_run.h"

#include <torch/torch.h>

#include "core/store/run_reader.h"
#include "core/train/checkpoint_tensors.h"

namespace descentlab::train {

SavedRun read_saved_run(const std::string& path, const std::string& label, const std::string& device) {
  SavedRun run;
  const store::RunReader reader(path);
  run.config =
      config::ExperimentConfig::from_json(nlohmann::json::parse(reader.header().config_json), path + " (config)");
  run.checkpoint = reader.checkpoint(label);
  if (!device.empty()) run.config.train.device = config::require_choice<config::Device>(device, "--device");
  return run;
}

void load_saved_model(const SavedRun& run, torch::nn::Module& module, const std::string& path,
                      const std::string& label) {
  const auto model = run.checkpoint.sections.find("model");
  if (model == run.checkpoint.sections.end()) {
    throw store::RunFileError(store::RunFileError::Kind::MissingObject, path, "/checkpoints/" + label + "/model",
                              "missing");
  }
  load_module_state(module, model->second, path, "/checkpoints/" + label + "/model");
}

}  // namespace descentlab::train
