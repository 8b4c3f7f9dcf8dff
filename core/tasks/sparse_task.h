#pragma once
// The two tasks of paper 2 at lab scale, each owning its data (on the training device) and its model:
//   vit: a tiny ViT classifying MNIST or Fashion-MNIST (cross-entropy, accuracy);
//   gpt: a tiny character-level GPT on Moby Dick (next-character cross-entropy, validation perplexity).

#include <torch/types.h>

#include <memory>
#include <string>
#include <vector>

#include "core/config/experiment_config.h"
#include "core/models/sparse_models.h"
#include "core/tasks/layerwise_task.h"

namespace descentlab::tasks {

class SparseTask {
 public:
  virtual ~SparseTask() = default;
  virtual std::shared_ptr<torch::nn::Module> module() = 0;
  virtual torch::Tensor forward(const torch::Tensor& input) = 0;  // logits
  virtual int64_t train_size() const = 0;
  virtual int64_t test_size() const = 0;
  virtual Batch train_batch(const std::vector<int64_t>& indices) = 0;
  virtual Batch test_batch(int64_t start, int64_t count) = 0;
  // How much of the training set one shuffle mixes: all of it, unless the task reads its rows from a file chunk by
  // chunk (ScriptTask on a data file larger than data.memory_mb).
  virtual data::ShuffleWindow shuffle_window() const { return {}; }
  // Mean cross-entropy of a batch (over images, or over every predicted character).
  virtual torch::Tensor loss(const torch::Tensor& logits, const Batch& batch) = 0;
  virtual std::string metric_name() const = 0;  // "accuracy" or "perplexity"
  // Sum over the batch of the metric's terms (correct predictions, or the summed loss over characters), and how
  // many terms that was.
  virtual std::pair<torch::Tensor, int64_t> metric_terms(const torch::Tensor& logits, const Batch& batch) = 0;
  virtual double finish_metric(double mean_term) const = 0;  // accuracy as is, perplexity = exp(mean loss)
  // The parameter-name prefixes of the embedding and readout (excluded from pruning by default).
  virtual const std::vector<std::string>& embedding_and_readout_prefixes() const = 0;
  virtual std::string describe() const = 0;
};

struct ScriptSources;  // core/tasks/script_task.h

// Builds the task of config.task ("vit" or "gpt") from the dataset cache at `data_root`; throws MissingDataError
// naming the dataset and the fetch command when it is absent. A torchscript task is made from `sources` (the
// module's bytes, the data file), or when nullptr from the files config.model.file and config.data.file.
std::unique_ptr<SparseTask> make_sparse_task(const config::ExperimentConfig& config, const std::string& data_root,
                                             torch::Device device, const ScriptSources* sources = nullptr);

class VitTask : public SparseTask {
 public:
  // images: float [N, 1, 28, 28] in [0, 1]; labels int64 [N]. Normalised with the training set's mean and std.
  VitTask(const config::ExperimentConfig& config, torch::Tensor train_images, torch::Tensor train_labels,
          torch::Tensor test_images, torch::Tensor test_labels, torch::Device device, std::string description);
  std::shared_ptr<torch::nn::Module> module() override { return model_.ptr(); }
  torch::Tensor forward(const torch::Tensor& images) override { return model_->forward(images); }
  int64_t train_size() const override { return train_images_.size(0); }
  int64_t test_size() const override { return test_images_.size(0); }
  Batch train_batch(const std::vector<int64_t>& indices) override;
  Batch test_batch(int64_t start, int64_t count) override;
  torch::Tensor loss(const torch::Tensor& logits, const Batch& batch) override;
  std::string metric_name() const override { return config::task_metric(config::Task::vit); }
  std::pair<torch::Tensor, int64_t> metric_terms(const torch::Tensor& logits, const Batch& batch) override;
  double finish_metric(double mean_term) const override { return mean_term; }
  const std::vector<std::string>& embedding_and_readout_prefixes() const override;
  std::string describe() const override { return description_; }

 private:
  torch::Device device_;
  models::TinyVit model_{nullptr};
  torch::Tensor train_images_, train_labels_, test_images_, test_labels_;
  std::string description_;
};

class GptTask : public SparseTask {
 public:
  // train_ids / validation_ids: int64 [characters]; windows of context + 1 characters, non-overlapping.
  GptTask(const config::ExperimentConfig& config, torch::Tensor train_ids, torch::Tensor validation_ids,
          int64_t vocabulary, torch::Device device, std::string description);
  std::shared_ptr<torch::nn::Module> module() override { return model_.ptr(); }
  torch::Tensor forward(const torch::Tensor& ids) override { return model_->forward(ids); }
  int64_t train_size() const override { return train_windows_.size(0); }
  int64_t test_size() const override { return validation_windows_.size(0); }
  Batch train_batch(const std::vector<int64_t>& indices) override;
  Batch test_batch(int64_t start, int64_t count) override;
  torch::Tensor loss(const torch::Tensor& logits, const Batch& batch) override;
  std::string metric_name() const override { return config::task_metric(config::Task::gpt); }
  std::pair<torch::Tensor, int64_t> metric_terms(const torch::Tensor& logits, const Batch& batch) override;
  double finish_metric(double mean_term) const override;
  const std::vector<std::string>& embedding_and_readout_prefixes() const override;
  std::string describe() const override { return description_; }

 private:
  torch::Device device_;
  models::TinyGpt model_{nullptr};
  torch::Tensor train_windows_, validation_windows_;  // int64 [windows, context + 1]
  std::string description_;
};

}  // namespace descentlab::tasks
