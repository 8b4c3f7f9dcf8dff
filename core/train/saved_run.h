#pragma once
// Reading a finished run back for evaluation (sweep, prune): its configuration and one checkpoint, and loading
// that checkpoint's model into a freshly built task, with errors that name the file and the object.

#include <torch/nn/module.h>

#include <string>

#include "core/config/experiment_config.h"
#include "core/store/run_file.h"

namespace descentlab::train {

struct SavedRun {
  config::ExperimentConfig config;
  record::CheckpointData checkpoint;
};

// Reads the configuration and checkpoint `label`; a non-empty `device` overrides the configured one.
SavedRun read_saved_run(const std::string& path, const std::string& label, const std::string& device);

// Loads the checkpoint's model section into `module` (shapes checked strictly).
void load_saved_model(const SavedRun& run, torch::nn::Module& module, const std::string& path,
                      const std::string& label);

}  // namespace descentlab::train
