#pragma once
// A user's model on a user's data (issue 53; docs/your-model.md): a TorchScript module (core/models/script_model.h)
// and an HDF5 data file (core/data/data_file.h), trained by the sparse engine like the presets' ViT and GPT: AdamW,
// HAM or HORST, dense or AC/DC, with the histograms and the sparsity frontier. The data file's task says the loss
// and the metric: classification (cross-entropy on [B, C] logits; accuracy), regression (mean squared error; RMSE),
// next-token (cross-entropy over [B, T, V]; perplexity). The contract is checked at construction on one batch of
// the training data, naming the file, the method, and the shapes expected and found.

#include <torch/types.h>

#include <memory>
#include <string>
#include <vector>

#include "core/config/experiment_config.h"
#include "core/data/data_file.h"
#include "core/models/script_model.h"
#include "core/tasks/file_rows.h"
#include "core/tasks/sparse_task.h"

namespace descentlab::tasks {

// What a torchscript run is made from: the module's bytes (its file's when the run begins, the run file's copy
// after) and the data file to read (config.data.file, or where a resume was told it is now).
struct ScriptSources {
  models::ModuleSource model;
  std::string data_path;
};

// Refuses (ConfigError naming the file and data.target) a config whose data.target is not the data file's task.
void check_data_target(const config::ExperimentConfig& config, const data::DataFileInfo& data);

class ScriptTask : public SparseTask {
 public:
  // `memory_mb` (data.memory_mb): the memory the training rows may take, and the test rows apart; a split larger
  // than that is read from the file chunk by chunk (core/tasks/file_rows.h).
  ScriptTask(const models::ModuleSource& model, const std::string& data_path, torch::Device device,
             int64_t memory_mb = config::DataConfig{}.memory_mb);

  std::shared_ptr<torch::nn::Module> module() override { return model_; }
  torch::Tensor forward(const torch::Tensor& input) override { return model_->forward(input); }
  int64_t train_size() const override { return train_.size(); }
  int64_t test_size() const override { return test_.size(); }
  Batch train_batch(const std::vector<int64_t>& indices) override;
  Batch test_batch(int64_t start, int64_t count) override;
  data::ShuffleWindow shuffle_window() const override { return train_.window(); }
  torch::Tensor loss(const torch::Tensor& prediction, const Batch& batch) override;
  std::string metric_name() const override;
  std::pair<torch::Tensor, int64_t> metric_terms(const torch::Tensor& prediction, const Batch& batch) override;
  double finish_metric(double mean_term) const override;
  // A user's module names none: every weight (a parameter of two or more dimensions) may be pruned.
  const std::vector<std::string>& embedding_and_readout_prefixes() const override;
  std::string describe() const override;

  const data::DataFileInfo& data() const { return info_; }
  const SplitRows& train_rows() const { return train_; }
  const SplitRows& test_rows() const { return test_; }
  models::ScriptModelImpl& model() { return *model_; }
  // How many tensors layer_outputs(x) returned for the contract's batch (0 for a module without it).
  int64_t layer_output_count() const { return layer_output_count_; }
  // Integer inputs (tokens): the words they are drawn from, the data file's vocabulary or else the largest token of
  // the training inputs plus one (0 for float inputs).
  int64_t input_vocabulary() const { return input_vocabulary_; }

 private:
  // Runs forward (and layer_outputs, when the module has it) on the first rows of the training set and checks what
  // the contract says of their shapes and values.
  void check_contract();
  // What forward must return for `rows` rows, as words ("[4, 10]"), or where it may differ (regression: y's shape).
  std::vector<int64_t> expected_shape(int64_t rows) const;

  torch::Device device_;
  data::DataFileInfo info_;
  std::shared_ptr<models::ScriptModelImpl> model_;
  SplitRows train_, test_;  // on the CPU; a batch goes to the device
  int64_t layer_output_count_ = 0;
  int64_t input_vocabulary_ = 0;
};

}  // namespace descentlab::tasks
