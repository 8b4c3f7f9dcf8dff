#include "core/tasks/sparse_task.h"

#include <torch/torch.h>

#include <cmath>
#include <sstream>

#include "core/config/json_reader.h"
#include "core/data/catalog.h"
#include "core/data/data_order.h"
#include "core/tasks/dataset_tensors.h"
#include "core/tasks/device_transfer.h"
#include "core/tasks/script_task.h"
#include "core/util/error.h"

namespace descentlab::tasks {
namespace {

// The first `limit` entries of a seeded permutation (all when limit is 0), in their original order.
torch::Tensor subsample(int64_t size, int64_t limit, uint64_t seed) {
  if (limit <= 0 || limit >= size) return torch::arange(size);
  std::vector<int64_t> chosen = data::epoch_permutation(seed, 0, size);
  chosen.resize(static_cast<size_t>(limit));
  std::sort(chosen.begin(), chosen.end());
  return torch::tensor(chosen, torch::kInt64);
}

// Training rows and the rows to evaluate on. With evaluate_on = "validation", validation_size rows of the training
// data (a seeded draw) are held out and evaluated on, and the test split is not used at all; train_limit then
// subsamples what is left.
struct Split {
  torch::Tensor train_rows, evaluation_rows;  // indices into the training data, or evaluation_rows undefined (test)
};

Split split_training_rows(const config::DataConfig& data, int64_t size, const std::string& what) {
  Split split;
  if (data.evaluate_on != config::EvaluateOn::validation) {
    split.train_rows = subsample(size, data.train_limit, data.split_seed);
    return split;
  }
  if (data.validation_size >= size) {
    throw config::ConfigError("data", "validation_size",
                              std::to_string(data.validation_size) + " leaves no training " + what + " (there are " +
                                  std::to_string(size) + ")");
  }
  const std::vector<int64_t> order = data::epoch_permutation(data.split_seed + 7, 0, size);
  std::vector<int64_t> held(order.begin(), order.begin() + data.validation_size);
  std::vector<int64_t> rest(order.begin() + data.validation_size, order.end());
  std::sort(held.begin(), held.end());
  std::sort(rest.begin(), rest.end());
  const torch::Tensor rest_rows = torch::tensor(rest, torch::kInt64);
  split.train_rows = rest_rows.index_select(0, subsample(rest_rows.size(0), data.train_limit, data.split_seed));
  split.evaluation_rows = torch::tensor(held, torch::kInt64);
  return split;
}

torch::Tensor index_rows(const torch::Tensor& rows, const std::vector<int64_t>& indices, torch::Device device) {
  const torch::Tensor where = indices_on(indices, device);
  return rows.index_select(0, where);
}

}  // namespace

VitTask::VitTask(const config::ExperimentConfig& config, torch::Tensor train_images, torch::Tensor train_labels,
                 torch::Tensor test_images, torch::Tensor test_labels, torch::Device device, std::string description)
    : device_(device), description_(std::move(description)) {
  const Split split = split_training_rows(config.data, train_images.size(0), "images");
  if (split.evaluation_rows.defined()) {
    test_images = train_images.index_select(0, split.evaluation_rows);
    test_labels = train_labels.index_select(0, split.evaluation_rows);
    description_ += " (evaluated on " + std::to_string(test_images.size(0)) + " held-out training images)";
  } else {
    const torch::Tensor test_pick = subsample(test_images.size(0), config.data.test_limit, config.data.split_seed + 1);
    test_images = test_images.index_select(0, test_pick);
    test_labels = test_labels.index_select(0, test_pick);
  }
  train_images = train_images.index_select(0, split.train_rows);
  train_labels = train_labels.index_select(0, split.train_rows);
  const torch::Tensor mean = train_images.mean();
  const torch::Tensor std = train_images.std();
  train_images_ = ((train_images - mean) / std).to(device);
  test_images_ = ((test_images - mean) / std).to(device);
  train_labels_ = train_labels.to(device);
  test_labels_ = test_labels.to(device);
  const int64_t classes = std::max(train_labels.max().item<int64_t>(), test_labels.max().item<int64_t>()) + 1;
  model_ = models::TinyVit(transformer_options(config.model), train_images.size(2), config.data.image_patch, classes);
  model_->to(device);
  std::ostringstream out;
  out << description_ << ": " << train_images_.size(0) << " train / " << test_images_.size(0) << " evaluation images, "
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
  auto windows = [&](const torch::Tensor& ids, const char* split) {
    const int64_t count = ids.size(0) / span;
    if (count < 1) {
      throw Error(std::string("tiny GPT: the ") + split + " text (" + std::to_string(ids.size(0)) +
                  " characters) is shorter than one window of context + 1 = " + std::to_string(span));
    }
    return ids.slice(0, 0, count * span).view({count, span});
  };
  const torch::Tensor train_all = windows(train_ids, "training");
  const Split split = split_training_rows(config.data, train_all.size(0), "windows");
  train_windows_ = train_all.index_select(0, split.train_rows).to(device);
  if (split.evaluation_rows.defined()) {
    validation_windows_ = train_all.index_select(0, split.evaluation_rows).to(device);
    description_ += " (evaluated on held-out training windows)";
  } else {
    const torch::Tensor all = windows(validation_ids, "validation");
    validation_windows_ =
        all.index_select(0, subsample(all.size(0), config.data.test_limit, config.data.split_seed + 1)).to(device);
  }
  model_ = models::TinyGpt(transformer_options(config.model), vocabulary, config.data.context);
  model_->to(device);
  std::ostringstream out;
  out << description_ << ": " << train_windows_.size(0) << " train / " << validation_windows_.size(0)
      << " evaluation windows of " << config.data.context << " characters, vocabulary " << vocabulary;
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
  const torch::Tensor summed =
      torch::nn::functional::cross_entropy(logits.reshape({-1, logits.size(-1)}), batch.target.reshape({-1}),
                                           torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum));
  return {summed.to(torch::kFloat64), batch.target.numel()};
}

double GptTask::finish_metric(double mean_term) const {
  return std::exp(mean_term);
}

const std::vector<std::string>& GptTask::embedding_and_readout_prefixes() const {
  return models::gpt_embedding_and_readout_prefixes();
}

std::unique_ptr<SparseTask> make_sparse_task(const config::ExperimentConfig& config, const std::string& data_root,
                                             torch::Device device, const ScriptSources* sources) {
  if (config.task == config::Task::vit) {
    const std::string dataset = config::word(config.data.dataset);
    const tasks::ImageTensors train = tasks::to_tensors(data::load_image_dataset(data_root, dataset, "train"));
    const tasks::ImageTensors test = tasks::to_tensors(data::load_image_dataset(data_root, dataset, "test"));
    return std::make_unique<VitTask>(config, train.images, train.labels, test.images, test.labels, device, dataset);
  }
  if (config.task == config::Task::gpt) {
    const data::ChapterCorpus corpus = data::load_moby_dick(data_root);
    const data::CharSplit split = data::split_corpus(corpus.text);
    const auto vocabulary = data::CharVocabulary::build(split.train);
    return std::make_unique<GptTask>(config, tasks::to_tensor(vocabulary.encode(split.train)),
                                     tasks::to_tensor(vocabulary.encode(split.validation)), vocabulary.size(), device,
                                     "Moby Dick (characters)");
  }
  if (config.task == config::Task::torchscript) {
    const int64_t memory = config.data.memory_mb;
    auto task = sources ? std::make_unique<ScriptTask>(sources->model, sources->data_path, device, memory)
                        : std::make_unique<ScriptTask>(models::read_module_file(config.model.file), config.data.file,
                                                       device, memory);
    check_data_target(config, task->data());
    return task;
  }
  throw Error("task \"" + config::word(config.task) +
              "\" is not a sparse-training task (known: vit, gpt, torchscript)");
}

}  // namespace descentlab::tasks
