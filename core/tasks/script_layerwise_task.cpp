#include "core/tasks/script_layerwise_task.h"

#include <ATen/CPUGeneratorImpl.h>
#include <torch/nn/functional/loss.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>

#include "core/record/noise.h"
#include "core/util/error.h"

namespace descentlab::tasks {

ScriptLayerwiseTask::ScriptLayerwiseTask(const models::ModuleSource& model, const std::string& data_path,
                                         torch::Device device, int64_t memory_mb, LayerOutputs layer_outputs)
    : inner_(model, data_path, device, memory_mb) {
  if (layer_outputs == LayerOutputs::when_present) kind_ = config::Task::torchscript;
  if (!inner_.model().has_layer_outputs()) {
    if (layer_outputs == LayerOutputs::when_present) {
      forward_only_ = true;  // layers_ = 0: the prediction is the one readout
      return;
    }
    throw DataError(model.path,
                    "has no layer_outputs(x) method, which layerwise descent needs (the prediction read out after "
                    "each layer 0..L; docs/your-model.md); train it with the torchscript task instead (HORST, AdamW)");
  }
  layers_ = inner_.layer_output_count() - 1;
  if (layers_ < 1 && layer_outputs == LayerOutputs::required) {
    throw DataError(model.path, "layer_outputs(x) returned " + std::to_string(inner_.layer_output_count()) +
                                    " output; layerwise descent needs at least 2 (layer 0, the input's readout, "
                                    "and one per layer after it)");
  }
}

std::vector<torch::Tensor> ScriptLayerwiseTask::layer_predictions(const torch::Tensor& input) {
  if (forward_only_) return {inner_.forward(input)};
  std::vector<torch::Tensor> outputs = inner_.model().layer_outputs(input);
  if (static_cast<int64_t>(outputs.size()) != layers_ + 1) {
    throw DataError(inner_.model().path(), "layer_outputs(x) returned " + std::to_string(outputs.size()) +
                                               " outputs for this batch, " + std::to_string(layers_ + 1) +
                                               " for the first (it must return one per layer, always)");
  }
  return outputs;
}

std::vector<torch::Tensor> ScriptLayerwiseTask::perturbed_predictions(const PerturbedBatch& perturbed) {
  return layer_predictions(perturbed.batch.input);
}

torch::Tensor ScriptLayerwiseTask::per_sample_loss(const torch::Tensor& prediction, const Batch& batch) {
  namespace F = torch::nn::functional;
  switch (data().task) {
    case data::DataTask::classification:
      return F::cross_entropy(prediction, batch.target, F::CrossEntropyFuncOptions().reduction(torch::kNone));
    case data::DataTask::regression:
      return (prediction - batch.target).pow(2).reshape({prediction.size(0), -1}).mean(1);
    case data::DataTask::next_token:
      return F::cross_entropy(prediction.reshape({-1, prediction.size(-1)}), batch.target.reshape({-1}),
                              F::CrossEntropyFuncOptions().reduction(torch::kNone))
          .reshape({prediction.size(0), -1})
          .mean(1);
  }
  return {};
}

torch::Tensor ScriptLayerwiseTask::metric_terms(const torch::Tensor& prediction, const Batch& batch) {
  torch::NoGradGuard no_grad;
  if (data().task == data::DataTask::classification) {
    return prediction.argmax(1).eq(batch.target).to(torch::kFloat64);
  }
  // Regression: the mean squared error of each sample (sqrt of the mean: RMSE over every element, the samples being
  // of one size); next-token: the mean cross-entropy of each sample's positions (exp of the mean: perplexity).
  return per_sample_loss(prediction, batch).to(torch::kFloat64);
}

std::vector<std::string> ScriptLayerwiseTask::noise_kinds() const {
  if (data().train_x.integer) return {record::noise::kDiscrete};
  return {record::noise::kGaussian, record::noise::kUniform};
}

PerturbedBatch ScriptLayerwiseTask::perturbed_test_batch(int64_t start, int64_t count, const std::string& noise,
                                                         double gamma, NoiseStream& stream) {
  const std::vector<std::string> kinds = noise_kinds();
  if (std::find(kinds.begin(), kinds.end(), noise) == kinds.end()) {
    refuse_noise(noise, noise_subject(), kinds);
  }
  // Each batch from its own seed (as video's): any batch is drawn without the ones before it.
  at::Generator generator = at::detail::createCPUGenerator(stream.batch_seed(start));
  PerturbedBatch perturbed;
  perturbed.batch = test_batch(start, count);
  const torch::Tensor clean = perturbed.batch.input;
  if (noise == record::noise::kDiscrete) {
    const double probability = std::min(1.0, gamma / 4.0);
    const torch::Tensor chance = torch::rand(clean.sizes(), generator, torch::kFloat32).to(clean.device());
    const torch::Tensor replacement =
        torch::randint(0, inner_.input_vocabulary(), clean.sizes(), generator, torch::kInt64).to(clean.device());
    perturbed.batch.input = torch::where(chance.lt(probability), replacement, clean);
    return perturbed;
  }
  const double scale = gamma * data().input_std;
  torch::Tensor draw = noise == record::noise::kGaussian
                           ? torch::randn(clean.sizes(), generator, torch::kFloat32)
                           : (torch::rand(clean.sizes(), generator, torch::kFloat32) * 2.0 - 1.0) * std::sqrt(3.0);
  perturbed.batch.input = clean + scale * draw.to(clean.device());
  return perturbed;
}

}  // namespace descentlab::tasks
