#pragma once
// The two tasks of paper 1, each owning its data (on the training device) and its unrolled transformer:
// text classification on IMDb (cross-entropy, accuracy) and video denoising on moving sprites (MSE, RMSE).

#include <torch/types.h>

#include <memory>
#include <string>
#include <vector>

#include "core/config/experiment_config.h"
#include "core/data/data_order.h"
#include "core/data/reviews.h"
#include "core/models/unrolled_transformer.h"
#include "core/tasks/batch.h"
#include "core/tasks/perturbation.h"

namespace descentlab::tasks {

class LayerwiseTask {
 public:
  virtual ~LayerwiseTask() = default;
  // DescentLab's own unrolled transformer (text, video); a user's module has none (Error).
  virtual models::UnrolledTransformerImpl& model();
  virtual std::shared_ptr<torch::nn::Module> module() = 0;
  // L, the layers read out after the input's own readout (layer_predictions gives L + 1).
  virtual int64_t layers() { return model().layers(); }
  // R(Φ_l) for l = 0..L: the prediction read out at every layer of `input` (by default the transformer's states
  // and readouts; a user's module's layer_outputs(x)).
  virtual std::vector<torch::Tensor> layer_predictions(const torch::Tensor& input);
  // The same for a perturbed batch (by default from perturbed_states).
  virtual std::vector<torch::Tensor> perturbed_predictions(const PerturbedBatch& perturbed);
  virtual int64_t train_size() const = 0;
  virtual int64_t test_size() const = 0;
  virtual Batch train_batch(const std::vector<int64_t>& indices) = 0;
  virtual Batch test_batch(int64_t start, int64_t count) = 0;
  // How much of the training set one shuffle mixes: all of it, unless the task reads its rows from a file chunk by
  // chunk (ScriptTask on a data file larger than data.memory_mb).
  virtual data::ShuffleWindow shuffle_window() const { return {}; }
  virtual torch::Tensor per_sample_loss(const torch::Tensor& prediction, const Batch& batch) = 0;  // [B]
  virtual std::string metric_name() const = 0;  // "accuracy" or "rmse"
  // Per-sample terms whose mean gives the metric: correct (0/1), or the squared error per sample.
  virtual torch::Tensor metric_terms(const torch::Tensor& prediction, const Batch& batch) = 0;
  virtual double finish_metric(double mean_term) const = 0;
  virtual std::string describe() const = 0;
  // Which paper-1 task this is (text or video): what the layer probe reads out of a prediction.
  virtual config::Task kind() const = 0;
  // What a refused noise is said not to apply to: "a text model", "a float-input model" (tasks::refuse_noise).
  virtual std::string noise_subject() const { return config::word(kind()); }

  // Robustness sweeps and the layer probe (core/tasks/perturbation.h). The noise kinds this task's inputs take, in
  // the noise vocabulary's order (its first is the default).
  virtual std::vector<std::string> noise_kinds() const = 0;
  // Test samples [start, start + count) with noise `noise` of strength `gamma` drawn from `stream`. A kind this
  // task does not draw throws descentlab::Error naming it and the kinds it takes.
  virtual PerturbedBatch perturbed_test_batch(int64_t start, int64_t count, const std::string& noise, double gamma,
                                              NoiseStream& stream) = 0;
  // Φ_0..Φ_L of a perturbed batch (by default the model's states of its input).
  virtual std::vector<torch::Tensor> perturbed_states(const PerturbedBatch& perturbed);
};

// The blocks' options from a model config (layers, width, heads, feed-forward width, dropout, readout).
models::TransformerOptions transformer_options(const config::ModelConfig& model);

// Per-sample losses of every layer's readout, [L + 1, B], from one forward pass.
torch::Tensor per_sample_layer_losses(LayerwiseTask& task, const Batch& batch,
                                      torch::Tensor* final_prediction = nullptr);
// The same for a perturbed batch, from the task's perturbed_states; `predictions`, if given, receives every
// layer's readout R(Φ_l).
torch::Tensor perturbed_layer_losses(LayerwiseTask& task, const PerturbedBatch& perturbed,
                                     std::vector<torch::Tensor>* predictions = nullptr);

class TextTask : public LayerwiseTask {
 public:
  // Splits, builds the vocabulary from the training split and encodes, as config.data says.
  TextTask(const config::ExperimentConfig& config, const std::vector<data::Review>& reviews, torch::Device device);

  models::UnrolledTransformerImpl& model() override { return *model_; }
  std::shared_ptr<torch::nn::Module> module() override { return model_; }
  models::TextTransformerImpl& text_model() { return *model_; }
  int64_t train_size() const override { return train_tokens_.size(0); }
  int64_t test_size() const override { return test_tokens_.size(0); }
  Batch train_batch(const std::vector<int64_t>& indices) override;
  Batch test_batch(int64_t start, int64_t count) override;
  torch::Tensor per_sample_loss(const torch::Tensor& logits, const Batch& batch) override;
  std::string metric_name() const override { return config::task_metric(config::Task::text); }
  torch::Tensor metric_terms(const torch::Tensor& logits, const Batch& batch) override;
  double finish_metric(double mean_term) const override { return mean_term; }
  std::string describe() const override;
  config::Task kind() const override { return config::Task::text; }
  std::vector<std::string> noise_kinds() const override;
  PerturbedBatch perturbed_test_batch(int64_t start, int64_t count, const std::string& noise, double gamma,
                                      NoiseStream& stream) override;
  std::vector<torch::Tensor> perturbed_states(const PerturbedBatch& perturbed) override;
  int64_t vocabulary_size() const { return vocabulary_size_; }

 private:
  torch::Device device_;
  torch::Tensor train_tokens_, train_labels_, test_tokens_, test_labels_;
  int64_t vocabulary_size_ = 0;
  std::shared_ptr<models::TextTransformerImpl> model_;
};

class VideoTask : public LayerwiseTask {
 public:
  VideoTask(const config::ExperimentConfig& config, torch::Device device);

  models::UnrolledTransformerImpl& model() override { return *model_; }
  std::shared_ptr<torch::nn::Module> module() override { return model_; }
  int64_t train_size() const override { return train_clean_.size(0); }
  int64_t test_size() const override { return test_clean_.size(0); }
  // Fresh noise for every training batch (from the default generator, so it resumes exactly).
  Batch train_batch(const std::vector<int64_t>& indices) override;
  // Fixed noise at the training level for the test set.
  Batch test_batch(int64_t start, int64_t count) override;
  // Test clips with noise of strength gamma x noise_std (the fixed test noise, robustness sweeps), fixed by `seed`.
  Batch noisy_test_batch(int64_t start, int64_t count, double gamma, uint64_t seed);
  torch::Tensor per_sample_loss(const torch::Tensor& prediction, const Batch& batch) override;
  std::string metric_name() const override { return config::task_metric(config::Task::video); }
  torch::Tensor metric_terms(const torch::Tensor& prediction, const Batch& batch) override;
  double finish_metric(double mean_term) const override;
  std::string describe() const override;
  config::Task kind() const override { return config::Task::video; }
  std::vector<std::string> noise_kinds() const override;
  // "video": noisy_test_batch's noise, from the stream's seed of the batch (perturb_clips).
  PerturbedBatch perturbed_test_batch(int64_t start, int64_t count, const std::string& noise, double gamma,
                                      NoiseStream& stream) override;

 private:
  torch::Device device_;
  double noise_std_;
  torch::Tensor train_clean_, test_clean_, test_noisy_;
  std::shared_ptr<models::VideoTransformerImpl> model_;
};

struct ScriptSources;  // core/tasks/script_task.h

// The task a config asks for, loading its data (IMDb from the data cache for text). A torchscript-layerwise task is
// made from `sources`, or when nullptr from the files config.model.file and config.data.file. A torchscript task
// (the sparse engine's) is made too, for its robustness sweeps: read out through the module's layer_outputs when it
// has them, else through its prediction alone (one readout).
std::unique_ptr<LayerwiseTask> make_task(const config::ExperimentConfig& config, const std::string& data_root,
                                         torch::Device device, const ScriptSources* sources = nullptr);

}  // namespace descentlab::tasks
