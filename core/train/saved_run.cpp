#include "core/train/saved_run.h"

#include <torch/torch.h>

#include "core/store/run_reader.h"
#include "core/train/checkpoint_reader.h"
#include "core/train/checkpoint_tensors.h"
#include "core/train/user_files.h"

namespace descentlab::train {

SavedRun read_saved_run(const std::string& path, const std::string& label, const std::string& device,
                        const std::string& data_file) {
  SavedRun run;
  const store::RunReader reader(path);
  run.config = config::stored_config(reader.header().config_json, path);
  run.checkpoint = reader.checkpoint(label);
  if (!device.empty()) run.config.train.device = config::require_choice<config::Device>(device, "--device");
  if (config::is_user_model(run.config.task)) run.sources = saved_user_files(reader, run.config, {"", data_file});
  return run;
}

void load_saved_model(const SavedRun& run, torch::nn::Module& module, const std::string& path,
                      const std::string& label) {
  const CheckpointReader checkpoint(run.checkpoint, path, label);
  load_module_state(module, checkpoint.require_section("model", "missing"), path, checkpoint.object("model"));
  // Weights that are NaN or infinite would give a table of NaN (sweep, prune) that looks like a measurement.
  torch::NoGradGuard no_grad;
  for (const auto& parameter : module.named_parameters()) {
    if (!torch::isfinite(parameter.value()).all().item<bool>()) {
      checkpoint.corrupt("model/" + parameter.key(),
                         "holds weights that are not finite (NaN or infinite); this checkpoint cannot be evaluated "
                         "(another checkpoint, e.g. --checkpoint best, may be)");
    }
  }
}

}  // namespace descentlab::train
