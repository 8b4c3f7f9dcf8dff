#include "core/train/sparse_task.h"

#include <torch/torch.h>

#include <cmath>
#include <sstream>

#include "core/data/catalog.h"
#include "core/data/tensors.h"
#include "core/train/data_order.h"
#include "core/util/error.h"

namespace descentlab::train {
namespace {

models::TransformerOptions transformer_options(const config::ModelConfig& model) {
  models::TransformerOptions options;
  options.layers = model.layers;
  options.width = model.width;
  options.heads = model.heads;
  options.ff_width = model.ff_width;
  options.dropout = model.dropout;
  return options;
}

// The first `limit` entries of a seeded permutation (all when limit is 0), in their original order.
torch::Tensor subsample(int64_t size, int64_t limit, uint64_t seed) {
  if (limit <= 0 || limit >= size) return torch::arange(size);
  std::vector<int64_t> chosen = epoch_permutation(seed, 0, size);
  chosen.resize(static_cast<size_t>(limit));
  std::sort(chosen.begin(), chosen.end());
  return torch::tensor(chosen, torch::kInt64);
}

torch::Tensor index_rows(const torch::Tensor& rows, const std::vector<int64_t>& indices, torch::Device device) {
  const torch::Tensor where = torch::tensor(indices, torch::kInt64).to(device);
  return rows.index_select(0, where);
}

}  // namespace

VitTask::VitTask(const config::ExperimentConfig& config, torch::Tensor train_images, torch::Tensor train_labels,
                 torch::Tensor test_images, torch::Tensor test_labels, torch::Device device, std::string description)
    : device_(device), description_(std::move(description)) {
  const torch::Tensor train_pick = subsample(train_images.size(0), config.data.train_limit, config.data.split_seed);
  const torch::Tensor test_pick = subsample(test_images.size(0), config.data.test_limit, config.data.split_seed + 1);
  train_images = train_images.index_select(0, train_pick);
  test_images = test_images.index_select(0, test_pick);
  const torch::Tensor mean = train_images.mean();
  const torch::Tensor std = train_images.std();
  train_images_ = ((train_images - mean) / std).to(device);
  test_images_ = ((test_images - mean) / std).to(device);
  train_labels_ = train_labels.index_select(0, train_pick).to(device);
  test_labels_ = test_labels.index_select(0, test_pick).to(device);
  const int64_t classes = std::max(train_labels.max().item<int64_t>(), test_labels.max().item<int64_t>()) + 1;
  model_ = models::TinyVit(transformer_options(config.model), train_images.size(2), config.data.image_patch, classes);
  model_->to(device);
  std::ostringstream out;
  out << description_ << ": " << train_images_.size(0) << " train / " << test_images_.size(0) << " test images, "
      << classes << " classes, patches " << config.data.image_patch << "x" << config.data.image_patch;
  description_ = out.str();
}

Batch VitTask::train_batch(const std::vector<int64_t>& indices) {
  return {index_rows(train_images_, indices, device_), index_rows(train_labels_, indices, device_)};
}

Batch VitTask::test_batch(int64_t start, int64_t count) {
  return {test_images_.slice(0, start, start + count), test_labels_.slice(0, start, start + count)};
}

torch::Tensor VitTask::loss(const torch::Tensor& logits, const Batch& batch) {
  return torch::nn::functional::cross_entropy(logits, batch.target);
}

std::pair<torch::Tensor, int64_t> VitTask::metric_terms(const torch::Tensor& logits, const Batch& batch) {
  return {logits.argmax(1).eq(batch.target).sum().to(torch::kFloat64), batch.target.size(0)};
}

const std::vector<std::string>& VitTask::embedding_and_readout_prefixes() const {
  return models::vit_embedding_and_readout_prefixes();
}

GptTask::GptTask(const config::ExperimentConfig& config, torch::Tensor train_ids, torch::Tensor validation_ids,
                 int64_t vocabulary, torch::Device device, std::string description)
    : device_(device), description_(std::move(description)) {
  const int64_t span = config.data.context + 1;
  auto windows = [&](const torch::Tensor& ids, int64_t limit, uint64_t seed, const char* split) {
    const int64_t count = ids.size(0) / span;
    if (count < 1) {
      throw Error(std::string("tiny GPT: the ") + split + " text (" + std::to_string(ids.size(0)) +
                  " characters) is shorter than one window of context + 1 = " + std::to_string(span));
    }
    const torch::Tensor all = ids.slice(0, 0, count * span).view({count, span});
    return all.index_select(0, subsample(count, limit, seed)).to(device);
  };
  train_windows_ = windows(train_ids, config.data.train_limit, config.data.split_seed, "training");
  validation_windows_ = windows(validation_ids, config.data.test_limit, config.data.split_seed + 1, "validation");
  model_ = models::TinyGpt(transformer_options(config.model), vocabulary, config.data.context);
  model_->to(device);
  std::ostringstream out;
  out << description_ << ": " << train_windows_.size(0) << " train / " << validation_windows_.size(0)
      << " validation windows of " << config.data.context << " characters, vocabulary " << vocabulary;
  description_ = out.str();
}

Batch GptTask::train_batch(const std::vector<int64_t>& indices) {
  const torch::Tensor rows = index_rows(train_windows_, indices, device_);
  return {rows.slice(1, 0, -1), rows.slice(1, 1)};
}

Batch GptTask::test_batch(int64_t start, int64_t count) {
  const torch::Tensor rows = validation_windows_.slice(0, start, start + count);
  return {rows.slice(1, 0, -1), rows.slice(1, 1)};
}

torch::Tensor GptTask::loss(const torch::Tensor& logits, const Batch& batch) {
  return torch::nn::functional::cross_entropy(logits.reshape({-1, logits.size(-1)}), batch.target.reshape({-1}));
}

std::pair<torch::Tensor, int64_t> GptTask::metric_terms(const torch::Tensor& logits, const Batch& batch) {
  const torch::Tensor summed = torch::nn::functional::cross_entropy(
      logits.reshape({-1, logits.size(-1)}), batch.target.reshape({-1}),
      torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum));
  return {summed.to(torch::kFloat64), batch.target.numel()};
}

double GptTask::finish_metric(double mean_term) const { return std::exp(mean_term); }

const std::vector<std::string>& GptTask::embedding_and_readout_prefixes() const {
  return models::gpt_embedding_and_readout_prefixes();
}

std::unique_ptr<SparseTask> make_sparse_task(const config::ExperimentConfig& config, const std::string& data_root,
                                             torch::Device device) {
  if (config.task == "vit") {
    const data::ImageTensors train = data::to_tensors(data::load_image_dataset(data_root, config.data.dataset, "train"));
    const data::ImageTensors test = data::to_tensors(data::load_image_dataset(data_root, config.data.dataset, "test"));
    return std::make_unique<VitTask>(config, train.images, train.labels, test.images, test.labels, device,
                                     config.data.dataset);
  }
  if (config.task == "gpt") {
    const data::ChapterCorpus corpus = data::load_moby_dick(data_root);
    const data::CharSplit split = data::split_corpus(corpus.text);
    const auto vocabulary = data::CharVocabulary::build(split.train);
    return std::make_unique<GptTask>(config, data::to_tensor(vocabulary.encode(split.train)),
                                     data::to_tensor(vocabulary.encode(split.validation)), vocabulary.size(), device,
                                     "Moby Dick (characters)");
  }
  throw Error("task \"" + config.task + "\" is not a sparse-training task (known: vit, gpt)");
}

}  // namespace descentlab::train
