#pragma once
// The options of `descentlab-cli train` and what they ask for: the experiment (a preset, a config file, or a user's
// module on a user's data file) and the checks of a resume's options.

#include <cstdint>
#include <string>
#include <vector>

#include "core/config/experiment_config.h"

namespace descentlab::cli {

struct TrainOptions {
  std::string preset;
  std::string size = "quick";
  bool size_given = false;  // --size named on the command line (its default is "quick")
  std::string config_file;
  std::string model_file;  // --model: a TorchScript module, with --data (the torchscript task)
  std::string data_file;
  bool layerwise = false;  // --layerwise: the torchscript-layerwise task (the module's layer_outputs)
  std::string optimizer;   // --optimizer: optimizer.name
  std::vector<std::string> overrides;
  std::string out;
  std::string resume;
  std::string branch;  // --branch RUN.h5[@STEP]: a child of that run, from its checkpoint at STEP (or "latest")
  std::string device;
  int64_t max_steps = -1;  // --max-steps; -1: none (0 keeps a new run's initial state without a step)
  bool json = false;
  bool overwrite = false;
  bool count_host_syncs = false;
  long long resident_before = 0;  // bytes resident when the command began (before the run was set up)
  int nproc = 0;
  std::string backend = "auto";
  double timeout_seconds = 300.0;
};

// --resume continues a run with its own configuration into its own file: options that would change either are
// refused (they were ignored), and so is a --max-steps below the step the run has reached (its "latest"), where
// `read_run` (the process that reads the run file: rank 0, or the launcher of --nproc).
void check_resume_options(const TrainOptions& options, bool read_run);

// --branch RUN.h5[@STEP]: the parent, the step (-1 for its "latest") and the child's configuration (the parent's with
// the --set overrides). Options that would give the child another experiment (--preset, --config, --model, --data,
// --optimizer, --resume, --nproc) are refused naming them, as is a missing --out.
struct BranchRequest {
  std::string parent;
  int64_t step = -1;
  config::ExperimentConfig config;
};
BranchRequest branch_request(const TrainOptions& options);

// `path` made absolute, or "" for "".
std::string absolute_or_empty(const std::string& path);

// The experiment the options ask for: a preset, a config file, or a user's module on a user's data file (the
// torchscript task; docs/your-model.md), with --optimizer and the --set overrides.
config::ExperimentConfig experiment_of(const TrainOptions& options);

}  // namespace descentlab::cli
