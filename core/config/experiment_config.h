#pragma once
// The configuration of an experiment: layerwise descent (SCIENCE.md §1) or sparse training with HORST (§2), read from
// JSON with every key validated. Defaults are those of SCIENCE.md. One name per idea: the JSON keys are the field names
// below. Each section's keys, bounds and choices are listed once (experiment_config.cpp), and both from_json and
// to_json walk that list; closed choices are enums (choices.h).

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/config/choices.h"

namespace descentlab::config {

struct DataConfig {
  // text (IMDb)
  int64_t train_limit = 0;  // 0: the whole 25,000; else a balanced seeded subsample
  int64_t test_limit = 0;
  int64_t max_length = 128;
  int64_t vocabulary_size = 10000;
  int64_t min_count = 2;
  uint64_t split_seed = 0;
  // video (moving sprites)
  int64_t train_clips = 512;
  int64_t test_clips = 128;
  int64_t frames = 8;
  int64_t height = 32;
  int64_t width = 32;
  int64_t sprites = 3;
  double noise_std = 0.3;  // σ_train of the pixel noise added to the input clip
  std::vector<int64_t> patch = {2, 4, 4};
  // vit (MNIST-format images)
  ImageDataset dataset = ImageDataset::fashion_mnist;
  int64_t image_patch = 7;  // square patches of image_patch x image_patch pixels
  // gpt (Moby Dick, characters); train_limit / test_limit cap the number of windows (0: all)
  int64_t context = 64;
  // vit and gpt: evaluate on the test split, or on a validation set held out of the training data (for tuning:
  // validation_size images or windows, drawn with split_seed and never trained on)
  EvaluateOn evaluate_on = EvaluateOn::test;
  // torchscript: the user's HDF5 data file, and what it trains (its root attribute "task", checked when it is read)
  std::string file;
  DataTarget target = DataTarget::classification;
  // torchscript: the memory its training rows may take (MiB); a larger file is read and shuffled chunk by chunk
  int64_t memory_mb = 4096;
  int64_t validation_size = 5000;
};

struct ModelConfig {
  std::string file;  // torchscript: the user's TorchScript module file
  int64_t layers = 4;
  int64_t width = 64;
  int64_t heads = 4;
  int64_t ff_width = 128;
  double dropout = 0.1;
  Readout readout = Readout::shared;
  Pooling pooling = Pooling::mean;  // text
};

struct TrainConfig {
  int64_t epochs = 3;
  int64_t batch_size = 32;
  double lr = 1e-3;
  // The rate's course over the run (core/train/lr_schedule.h): a linear warm-up over `warmup` (a fraction of the
  // run's steps below 1, or whole steps from 1), then constant, cosine or linear decay to 0 at the last step.
  LrShape lr_schedule = LrShape::constant;
  double warmup = 0.0;
  double weight_decay = 0.01;
  double grad_clip = 1.0;          // 0: off
  int64_t metric_interval = 10;    // steps between metric reads (no host sync in between)
  int64_t histogram_interval = 0;  // steps between weight histograms; 0: once per epoch
  // States kept to branch from (issue 55): every keep_interval steps (0: none beyond "latest" and "best") a checkpoint
  // "step-N", at most keep_count of them and keep_megabytes in all, the oldest let go first.
  int64_t keep_interval = 0;
  int64_t keep_count = 10;
  int64_t keep_megabytes = 2048;
  uint64_t seed = 0;
  Device device = Device::automatic;
};

struct ConstraintConfig {
  bool enabled = false;                                    // false: ERM on f_L
  double alpha = 0.05;                                     // required relative decrease per layer
  AlphaSchedule alpha_schedule = AlphaSchedule::constant;  // linear: alpha -> alpha_final over the epochs
  double alpha_final = 0.05;                               // absent: alpha
  double dual_lr = 0.01;                                   // η_λ
  DualUpdate dual_update = DualUpdate::batch;              // epoch: on a held-out constraint batch
  int64_t constraint_batch = 256;                          // held-out samples for per-epoch dual steps
  int64_t dual_warmup_epochs = 0;                          // epochs with λ held at 0
  bool stop_gradient = false;                              // treat f_{l-1} as a constant inside g_l
  bool resilient = false;                                  // relax with slacks u_l >= 0, cost (a/2) u^2
  double resilient_cost = 1.0;                             // a
  double resilient_lr = 0.01;                              // η_u
};

// HORST (SCIENCE.md §2). alpha and beta default by optimizer: horst 5 / 0, ham 200 / 1e-3.
struct OptimizerConfig {
  OptimizerName name = OptimizerName::adamw;
  double alpha = 0.0;
  double beta = 0.0;
  double exponent_clamp = 5.0;
  int64_t min_dim = 2;  // tensors with fewer dimensions get plain AdamW
};

// Sparse training: AC/DC to `target` sparsity, fractions of the run in steps or epochs (SCIENCE.md §2).
struct SparsityConfig {
  SparsityMethod method = SparsityMethod::none;
  double target = 0.9;
  SparsityScope scope = SparsityScope::global;
  bool exclude_embeddings_and_readout = true;
  PhaseUnits units = PhaseUnits::steps;  // where phase boundaries fall
  double warmup = 0.10;
  double phase = 0.05;
  double alternate_until = 0.75;
  double decompressed_until = 0.85;
  // Test (or validation) samples evaluated just before and right after each compression's mask: the first ones;
  // 0: all of them, as at epoch ends (two evaluations per compression; the vit presets' quick size uses 256).
  int64_t compression_samples = 0;
  // The live sparsity frontier (vit, gpt): every frontier_interval steps and at the run's last step, a copy of the
  // weights pruned layer by layer by magnitude to each of frontier_sparsities, evaluated on the first
  // frontier_samples test (or validation) samples. 0: off. The defaults cost under 5 % of training time
  // (docs/benchmarks.md); the gpt presets evaluate 32 windows.
  int64_t frontier_interval = 200;
  std::vector<double> frontier_sparsities = {0.0, 0.5, 0.7, 0.8, 0.9, 0.95};
  int64_t frontier_samples = 128;
};

struct ExperimentConfig {
  std::string name = "custom";
  Task task = Task::text;  // text, video: layerwise descent; vit, gpt: HORST
  DataConfig data;
  ModelConfig model;
  TrainConfig train;
  ConstraintConfig constraints;
  OptimizerConfig optimizer;
  SparsityConfig sparsity;

  bool is_layerwise() const { return config::is_layerwise(task); }

  // Reads and validates; throws ConfigError naming `source` and the key.
  static ExperimentConfig from_json(const nlohmann::json& document, const std::string& source);
  nlohmann::json to_json() const;
};

// The run's test metric ("accuracy", "rmse", "perplexity"): the task's, or for torchscript its data file's target.
inline const char* metric_of(const ExperimentConfig& config) {
  return is_user_model(config.task) ? data_target_metric(config.data.target) : task_metric(config.task);
}

// One key of the config, from the same field list the reader and writer walk: what the window's form, the CLI's
// `train --help-config` and docs/config.md show.
struct KeyInfo {
  std::string key;                   // "model.readout"
  std::string about;                 // one line: what it does, units
  std::string type;                  // "integer", "number", "true or false", "text", "list of integers", "choice"
  std::string range;                 // "1 … 256", "0 … ∞" (numbers); empty otherwise
  std::vector<std::string> choices;  // the words of a choice
  nlohmann::json default_value;
};
std::vector<KeyInfo> config_schema();

// Every closed-choice key ("model.readout") with its words: the window offers these as lists.
std::map<std::string, std::vector<std::string>> choice_keys();

// Built-in presets (resources/presets/*.json, compiled in): names such as "text-erm", each with sizes "quick" and
// "full". Throws ConfigError for an unknown name or size, listing the known ones.
std::vector<std::string> preset_names();
// A preset's one-line description (its "description" key, which preset_document leaves out); "" when unknown. The
// key may name config values as "{section.key}" (so that it never states a value the form does not hold): the
// template keeps them, preset_description fills them with the preset's quick-size values.
// The dataset a config trains on, by its datasets/SOURCES name ("imdb", "mnist", "fashion-mnist", "moby-dick"), or
// "" for the video task, whose clips are generated.
std::string dataset_of(const ExperimentConfig& config);

std::string preset_description_template(const std::string& name);
std::string preset_description(const std::string& name);
// `text` with every "{section.key}" replaced by `value_of(key)`; a placeholder whose value is "" stays as written.
std::string fill_description(const std::string& text, const std::function<std::string(const std::string&)>& value_of);
nlohmann::json preset_document(const std::string& name, const std::string& size);

// The configuration stored in the run file `path` (its "config" attribute, docs/run-file.md): a DataError naming the
// file when it is not JSON, a ConfigError naming the file and the key when a key is invalid.
ExperimentConfig stored_config(const std::string& config_json, const std::string& path);

// A preset or a config file, then "key=value" overrides, validated. A config file that is missing, a folder or not
// JSON is a ConfigError naming it; one the system will not read is an IoError.
ExperimentConfig load_experiment(const std::string& preset, const std::string& size, const std::string& config_file,
                                 const std::vector<std::string>& overrides);

}  // namespace descentlab::config
