#pragma once
// A user's model by layerwise descent (issue 53 item 2; docs/your-model.md): a TorchScript module with
// layer_outputs(x) on a user's HDF5 data file, trained like the text and video presets (ERM or constrained, λ, the
// per-layer loss, the descent certificate), swept for robustness and probed layer by layer (item 4). The module's
// layer_outputs(x) gives the prediction read out at each layer 0..L; the data file's task gives the per-sample loss
// and metric (classification: cross-entropy, accuracy; regression: squared error, RMSE; next-token: cross-entropy
// over the positions, perplexity). Noise for sweeps and the probe: on float inputs, gaussian and uniform noise scaled
// by the training inputs' standard deviation (x + γσ·N(0, 1), x + γσ·U(-√3, √3)); on integer inputs (tokens),
// discrete: each token replaced, with probability min(1, γ/4), by one drawn uniformly from the vocabulary.

#include <memory>
#include <string>
#include <vector>

#include "core/tasks/layerwise_task.h"
#include "core/tasks/script_task.h"

namespace descentlab::tasks {

// What a module's layer_outputs is to the task: required (layerwise descent), or read when the module has it and
// else the prediction alone (L = 0), for a robustness sweep of a run of the sparse engine (the torchscript task).
enum class LayerOutputs { required, when_present };

class ScriptLayerwiseTask : public LayerwiseTask {
 public:
  // Loads and checks as ScriptTask does; `required`: refuses a module without layer_outputs (DataError naming the
  // file).
  ScriptLayerwiseTask(const models::ModuleSource& model, const std::string& data_path, torch::Device device,
                      int64_t memory_mb = config::DataConfig{}.memory_mb,
                      LayerOutputs layer_outputs = LayerOutputs::required);

  std::shared_ptr<torch::nn::Module> module() override { return inner_.module(); }
  int64_t layers() override { return layers_; }
  std::vector<torch::Tensor> layer_predictions(const torch::Tensor& input) override;
  std::vector<torch::Tensor> perturbed_predictions(const PerturbedBatch& perturbed) override;
  int64_t train_size() const override { return inner_.train_size(); }
  int64_t test_size() const override { return inner_.test_size(); }
  Batch train_batch(const std::vector<int64_t>& indices) override { return inner_.train_batch(indices); }
  Batch test_batch(int64_t start, int64_t count) override { return inner_.test_batch(start, count); }
  data::ShuffleWindow shuffle_window() const override { return inner_.shuffle_window(); }
  torch::Tensor per_sample_loss(const torch::Tensor& prediction, const Batch& batch) override;
  std::string metric_name() const override { return inner_.metric_name(); }
  torch::Tensor metric_terms(const torch::Tensor& prediction, const Batch& batch) override;
  double finish_metric(double mean_term) const override { return inner_.finish_metric(mean_term); }
  std::string describe() const override { return inner_.describe(); }
  config::Task kind() const override { return kind_; }
  std::vector<std::string> noise_kinds() const override;
  std::string noise_subject() const override { return data().train_x.integer ? "token-input" : "float-input"; }
  PerturbedBatch perturbed_test_batch(int64_t start, int64_t count, const std::string& noise, double gamma,
                                      NoiseStream& stream) override;

  const data::DataFileInfo& data() const { return inner_.data(); }

 private:
  ScriptTask inner_;
  int64_t layers_ = 0;
  bool forward_only_ = false;  // a module without layer_outputs swept as its prediction alone
  config::Task kind_ = config::Task::torchscript_layerwise;
};

}  // namespace descentlab::tasks
