#pragma once
// Reading a finished run back for evaluation (sweep, prune): its configuration and one checkpoint, and loading
// that checkpoint's model into a freshly built task, with errors that name the file and the object.

#include <torch/nn/module.h>

#include <optional>
#include <string>

#include "core/config/experiment_config.h"
#include "core/store/run_file.h"
#include "core/tasks/script_task.h"

namespace descentlab::train {

struct SavedRun {
  config::ExperimentConfig config;
  record::CheckpointData checkpoint;
  // A run of a user's module: the module from the run's copy, the data file checked (core/train/user_files.h).
  std::optional<tasks::ScriptSources> sources;
  const tasks::ScriptSources* script_sources() const { return sources ? &*sources : nullptr; }
};

// Reads the configuration and checkpoint `label`; a non-empty `device` overrides the configured one. A non-empty
// `data_file` is where a torchscript run's data file is now (checked against its recorded SHA-256).
SavedRun read_saved_run(const std::string& path, const std::string& label, const std::string& device,
                        const std::string& data_file = "");

// Loads the checkpoint's model section into `module` (shapes checked strictly).
void load_saved_model(const SavedRun& run, torch::nn::Module& module, const std::string& path,
                      const std::string& label);

}  // namespace descentlab::train
