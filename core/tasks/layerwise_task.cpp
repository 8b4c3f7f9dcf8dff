#include "core/tasks/layerwise_task.h"

#include <torch/torch.h>

#include <cmath>

#include "core/data/catalog.h"
#include "core/data/data_order.h"
#include "core/data/sprites.h"
#include "core/record/noise.h"
#include "core/tasks/dataset_tensors.h"
#include "core/tasks/device_transfer.h"
#include "core/tasks/script_layerwise_task.h"
#include "core/util/error.h"
#include "core/util/number_text.h"

namespace descentlab::tasks {

models::UnrolledTransformerImpl& LayerwiseTask::model() {
  throw Error("the task " + describe() + " has no DescentLab transformer (a user's module is read by its layers)");
}

std::vector<torch::Tensor> LayerwiseTask::layer_predictions(const torch::Tensor& input) {
  auto& transformer = model();
  const std::vector<torch::Tensor> states = transformer.states(input);
  std::vector<torch::Tensor> predictions;
  predictions.reserve(states.size());
  for (size_t l = 0; l < states.size(); ++l) {
    predictions.push_back(transformer.readout(static_cast<int64_t>(l), states[l], input));
  }
  return predictions;
}

std::vector<torch::Tensor> LayerwiseTask::perturbed_predictions(const PerturbedBatch& perturbed) {
  auto& transformer = model();
  const std::vector<torch::Tensor> states = perturbed_states(perturbed);
  std::vector<torch::Tensor> predictions;
  predictions.reserve(states.size());
  for (size_t l = 0; l < states.size(); ++l) {
    predictions.push_back(transformer.readout(static_cast<int64_t>(l), states[l], perturbed.batch.input));
  }
  return predictions;
}

torch::Tensor per_sample_layer_losses(LayerwiseTask& task, const Batch& batch, torch::Tensor* final_prediction) {
  const std::vector<torch::Tensor> predictions = task.layer_predictions(batch.input);
  std::vector<torch::Tensor> losses;
  losses.reserve(predictions.size());
  for (const auto& prediction : predictions) losses.push_back(task.per_sample_loss(prediction, batch));
  if (final_prediction) *final_prediction = predictions.back();
  return torch::stack(losses);
}

std::vector<torch::Tensor> LayerwiseTask::perturbed_states(const PerturbedBatch& perturbed) {
  return model().states(perturbed.batch.input);
}

torch::Tensor perturbed_layer_losses(LayerwiseTask& task, const PerturbedBatch& perturbed,
                                     std::vector<torch::Tensor>* predictions) {
  const std::vector<torch::Tensor> read_out = task.perturbed_predictions(perturbed);
  std::vector<torch::Tensor> losses;
  losses.reserve(read_out.size());
  for (const auto& prediction : read_out) losses.push_back(task.per_sample_loss(prediction, perturbed.batch));
  if (predictions) predictions->insert(predictions->end(), read_out.begin(), read_out.end());
  return torch::stack(losses);
}

models::TransformerOptions transformer_options(const config::ModelConfig& model) {
  models::TransformerOptions options;
  options.layers = model.layers;
  options.width = model.width;
  options.heads = model.heads;
  options.ff_width = model.ff_width;
  options.dropout = model.dropout;
  options.per_layer_readout = model.readout == config::Readout::per_layer;
  return options;
}

TextTask::TextTask(const config::ExperimentConfig& config, const std::vector<data::Review>& reviews,
                   torch::Device device)
    : device_(device) {
  const auto split = data::split_reviews(
      reviews, data::ReviewSplitOptions{config.data.train_limit, config.data.test_limit, config.data.split_seed});
  const auto vocabulary = data::WordVocabulary::build(split.train, config.data.vocabulary_size, config.data.min_count);
  vocabulary_size_ = vocabulary.size();
  const auto train = tasks::to_tensors(data::encode_reviews(split.train, vocabulary, config.data.max_length));
  const auto test = tasks::to_tensors(data::encode_reviews(split.test, vocabulary, config.data.max_length));
  train_tokens_ = train.token_ids.to(device);
  train_labels_ = train.labels.to(device);
  // The test split is stored negatives first; a fixed shuffle makes any prefix (sweeps with --limit, quick
  // evaluations) a fair sample of both labels.
  const auto order = data::epoch_permutation(config.data.split_seed, /*epoch=*/-1, test.labels.size(0));
  const torch::Tensor shuffle = torch::tensor(order, torch::kInt64);
  test_tokens_ = test.token_ids.index_select(0, shuffle).to(device);
  test_labels_ = test.labels.index_select(0, shuffle).to(device);
  model_ = std::make_shared<models::TextTransformerImpl>(transformer_options(config.model), vocabulary_size_,
                                                         config.data.max_length, 2,
                                                         config.model.pooling == config::Pooling::first);
  model_->to(device);
}

Batch TextTask::train_batch(const std::vector<int64_t>& indices) {
  const torch::Tensor index = indices_on(indices, device_);
  return Batch{train_tokens_.index_select(0, index), train_labels_.index_select(0, index)};
}

Batch TextTask::test_batch(int64_t start, int64_t count) {
  return Batch{test_tokens_.narrow(0, start, count), test_labels_.narrow(0, start, count)};
}

torch::Tensor TextTask::per_sample_loss(const torch::Tensor& logits, const Batch& batch) {
  return torch::nn::functional::cross_entropy(logits, batch.target,
                                              torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone));
}

torch::Tensor TextTask::metric_terms(const torch::Tensor& logits, const Batch& batch) {
  return logits.argmax(1).eq(batch.target).to(torch::kFloat64);
}

std::vector<std::string> TextTask::noise_kinds() const {
  return record::noise_kinds(/*video=*/false);
}

PerturbedBatch TextTask::perturbed_test_batch(int64_t start, int64_t count, const std::string& noise, double gamma,
                                              NoiseStream& stream) {
  return perturb_text(test_batch(start, count), noise, gamma, stream, *model_, vocabulary_size_);
}

std::vector<torch::Tensor> TextTask::perturbed_states(const PerturbedBatch& perturbed) {
  if (!perturbed.token_embeddings.defined()) return model_->states(perturbed.batch.input);
  return model_->states_from(model_->embed_tokens(perturbed.token_embeddings, perturbed.batch.input));
}

std::string TextTask::describe() const {
  return "IMDb sentiment: " + std::to_string(train_size()) + " train / " + std::to_string(test_size()) +
         " test reviews, vocabulary " + std::to_string(vocabulary_size_) + ", length " +
         std::to_string(train_tokens_.size(1));
}

VideoTask::VideoTask(const config::ExperimentConfig& config, torch::Device device)
    : device_(device), noise_std_(config.data.noise_std) {
  data::SpriteVideoOptions options;
  options.frames = config.data.frames;
  options.height = config.data.height;
  options.width = config.data.width;
  options.sprites = config.data.sprites;
  options.max_size = std::min<double>(10.0, static_cast<double>(std::min(options.height, options.width)) / 2.0);
  options.min_size = std::min(5.0, options.max_size);
  options.seed = config.data.split_seed;
  // Test clips come after the training clips in the same seeded stream: disjoint, and each reproducible alone.
  train_clean_ = tasks::sprite_video_batch(options, 0, config.data.train_clips).to(device);
  test_clean_ =
      tasks::sprite_video_batch(options, static_cast<uint64_t>(config.data.train_clips), config.data.test_clips)
          .to(device);
  test_noisy_ = noisy_test_batch(0, test_clean_.size(0), 1.0, config.data.split_seed + 1).input;
  model_ = std::make_shared<models::VideoTransformerImpl>(transformer_options(config.model), options.frames,
                                                          options.height, options.width, config.data.patch);
  model_->to(device);
}

Batch VideoTask::train_batch(const std::vector<int64_t>& indices) {
  const torch::Tensor index = indices_on(indices, device_);
  const torch::Tensor clean = train_clean_.index_select(0, index);
  return Batch{clean + noise_std_ * torch::randn_like(clean), clean};
}

Batch VideoTask::test_batch(int64_t start, int64_t count) {
  return Batch{test_noisy_.narrow(0, start, count), test_clean_.narrow(0, start, count)};
}

Batch VideoTask::noisy_test_batch(int64_t start, int64_t count, double gamma, uint64_t seed) {
  const torch::Tensor clean = test_clean_.narrow(0, start, count);
  auto generator = at::detail::createCPUGenerator(seed);
  return Batch{add_gaussian_noise(clean, noise_std_ * gamma, generator), clean};
}

std::vector<std::string> VideoTask::noise_kinds() const {
  return record::noise_kinds(/*video=*/true);
}

PerturbedBatch VideoTask::perturbed_test_batch(int64_t start, int64_t count, const std::string& noise, double gamma,
                                               NoiseStream& stream) {
  return perturb_clips(test_clean_.narrow(0, start, count), start, noise, gamma, noise_std_, stream);
}

torch::Tensor VideoTask::per_sample_loss(const torch::Tensor& prediction, const Batch& batch) {
  return (prediction - batch.target).pow(2).flatten(1).mean(1);
}

torch::Tensor VideoTask::metric_terms(const torch::Tensor& prediction, const Batch& batch) {
  return per_sample_loss(prediction, batch).detach().to(torch::kFloat64);
}

double VideoTask::finish_metric(double mean_term) const {
  return std::sqrt(mean_term);
}

std::string VideoTask::describe() const {
  return "moving-sprite denoising: " + std::to_string(train_size()) + " train / " + std::to_string(test_size()) +
         " test clips of " + std::to_string(train_clean_.size(1)) + "x" + std::to_string(train_clean_.size(2)) + "x" +
         std::to_string(train_clean_.size(3)) + ", noise std " + short_number_text(noise_std_);
}

std::unique_ptr<LayerwiseTask> make_task(const config::ExperimentConfig& config, const std::string& data_root,
                                         torch::Device device, const ScriptSources* sources) {
  if (config::is_user_model(config.task)) {
    // A torchscript run (the sparse engine) is swept through its layer_outputs when it has them, else its prediction.
    const int64_t memory = config.data.memory_mb;
    const auto outputs = config.task == config::Task::torchscript ? LayerOutputs::when_present : LayerOutputs::required;
    auto task = sources
                    ? std::make_unique<ScriptLayerwiseTask>(sources->model, sources->data_path, device, memory, outputs)
                    : std::make_unique<ScriptLayerwiseTask>(models::read_module_file(config.model.file),
                                                            config.data.file, device, memory, outputs);
    check_data_target(config, task->data());
    return task;
  }
  if (config.task == config::Task::text) {
    return std::make_unique<TextTask>(config, data::load_imdb_reviews(data_root), device);
  }
  if (config.task == config::Task::video) return std::make_unique<VideoTask>(config, device);
  throw Error(
      "task \"" + config::word(config.task) +
      "\" is not a layerwise-descent task (known: text, video, torchscript-layerwise); robustness sweeps apply to "
      "text, video and torchscript-layerwise runs, one-shot pruning (descentlab-cli prune) to vit, gpt and torchscript "
      "runs");
}

}  // namespace descentlab::tasks
