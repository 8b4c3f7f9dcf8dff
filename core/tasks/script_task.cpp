#include "core/tasks/script_task.h"

#include <torch/nn/functional/loss.h>
#include <torch/torch.h>

#include <cmath>
#include <filesystem>

#include "core/config/json_reader.h"
#include "core/util/error.h"

namespace descentlab::tasks {
namespace {

std::string shape_text(torch::IntArrayRef shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

}  // namespace

void check_data_target(const config::ExperimentConfig& config, const data::DataFileInfo& data) {
  const auto target = static_cast<config::DataTarget>(static_cast<int>(data.task));
  if (target != config.data.target) {
    throw config::ConfigError(data.path, "data.target",
                              "is \"" + config::word(config.data.target) +
                                  "\" in the config, but the file's task is \"" + data::data_task_word(data.task) +
                                  "\"");
  }
}

ScriptTask::ScriptTask(const models::ModuleSource& model, const std::string& data_path, torch::Device device,
                       int64_t memory_mb)
    : device_(device),
      info_(data::read_data_file(data_path)),
      train_(info_.path, info_.train_x, info_.train_y, memory_mb << 20),
      test_(info_.path, info_.test_x, info_.test_y, memory_mb << 20) {
  model_ = std::make_shared<models::ScriptModelImpl>(model, device);
  input_vocabulary_ = info_.input_max + 1;
  check_contract();
}

Batch ScriptTask::train_batch(const std::vector<int64_t>& indices) {
  const Batch rows = train_.gather(indices);
  return {rows.input.to(device_), rows.target.to(device_)};
}

Batch ScriptTask::test_batch(int64_t start, int64_t count) {
  const Batch rows = test_.range(start, count);
  return {rows.input.to(device_), rows.target.to(device_)};
}

torch::Tensor ScriptTask::loss(const torch::Tensor& prediction, const Batch& batch) {
  switch (info_.task) {
    case data::DataTask::classification: return torch::nn::functional::cross_entropy(prediction, batch.target);
    case data::DataTask::regression: return torch::mse_loss(prediction, batch.target);
    case data::DataTask::next_token:
      return torch::nn::functional::cross_entropy(prediction.reshape({-1, prediction.size(-1)}),
                                                  batch.target.reshape({-1}));
  }
  return {};
}

std::string ScriptTask::metric_name() const {
  switch (info_.task) {
    case data::DataTask::classification: return "accuracy";
    case data::DataTask::regression: return "rmse";
    case data::DataTask::next_token: return "perplexity";
  }
  return "";
}

std::pair<torch::Tensor, int64_t> ScriptTask::metric_terms(const torch::Tensor& prediction, const Batch& batch) {
  torch::NoGradGuard no_grad;
  switch (info_.task) {
    case data::DataTask::classification:
      return {prediction.argmax(1).eq(batch.target).sum().to(torch::kFloat64), batch.target.size(0)};
    case data::DataTask::regression:
      return {(prediction - batch.target).pow(2).sum().to(torch::kFloat64), batch.target.numel()};
    case data::DataTask::next_token: {
      const torch::Tensor summed = torch::nn::functional::cross_entropy(
          prediction.reshape({-1, prediction.size(-1)}), batch.target.reshape({-1}),
          torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kSum));
      return {summed.to(torch::kFloat64), batch.target.numel()};
    }
  }
  return {};
}

double ScriptTask::finish_metric(double mean_term) const {
  if (info_.task == data::DataTask::regression) return std::sqrt(mean_term);
  if (info_.task == data::DataTask::next_token) return std::exp(mean_term);
  return mean_term;
}

const std::vector<std::string>& ScriptTask::embedding_and_readout_prefixes() const {
  static const std::vector<std::string> none;
  return none;
}

std::string ScriptTask::describe() const {
  return std::filesystem::path(model_->path()).filename().string() + " on " + info_.name;
}

std::vector<int64_t> ScriptTask::expected_shape(int64_t rows) const {
  switch (info_.task) {
    case data::DataTask::classification: return {rows, info_.classes};
    case data::DataTask::regression: {
      std::vector<int64_t> shape(info_.train_y.shape.begin(), info_.train_y.shape.end());
      shape[0] = rows;
      return shape;
    }
    case data::DataTask::next_token: return {rows, info_.train_x.shape[1], info_.vocabulary};
  }
  return {};
}

void ScriptTask::check_contract() {
  const int64_t rows = std::min<int64_t>(4, train_size());
  std::vector<int64_t> first_rows(static_cast<size_t>(rows));
  for (int64_t i = 0; i < rows; ++i) first_rows[static_cast<size_t>(i)] = i;
  const Batch batch = train_batch(first_rows);
  const std::vector<int64_t> expected = expected_shape(rows);
  const std::string what = std::string(data::data_task_word(info_.task)) + " on " + info_.path;
  const auto check = [&](const torch::Tensor& output, const std::string& method) {
    if (output.sizes().vec() != expected) {
      throw DataError(model_->path(), method + " returned " + shape_text(output.sizes()) + " for " +
                                          std::to_string(rows) + " rows of " + info_.train_x.name + " " +
                                          shape_text(batch.input.sizes()) + "; " + what + " needs " +
                                          shape_text(expected) + " (docs/your-model.md)");
    }
    if (!output.is_floating_point()) {
      throw DataError(model_->path(), method + " returned " + std::string(c10::toString(output.scalar_type())) +
                                          "; a floating-point tensor is expected");
    }
    if (!torch::isfinite(output).all().item<bool>()) {
      throw DataError(model_->path(), method + " returned non-finite values (NaN or infinity) for the first " +
                                          std::to_string(rows) + " rows of " + info_.path);
    }
  };
  torch::NoGradGuard no_grad;
  model_->eval();
  check(forward(batch.input), "forward(x)");
  if (model_->has_layer_outputs()) {
    const std::vector<torch::Tensor> outputs = model_->layer_outputs(batch.input);
    layer_output_count_ = static_cast<int64_t>(outputs.size());
    for (size_t layer = 0; layer < outputs.size(); ++layer) {
      check(outputs[layer], "layer_outputs(x)[" + std::to_string(layer) + "]");
    }
  }
  model_->train();
}

}  // namespace descentlab::tasks
