#include "core/train/layerwise_trainer.h"

#include <torch/torch.h>

#include <chrono>
#include <cmath>

#include "core/eval/weight_histograms.h"
#include "core/store/checkpoint_tensors.h"
#include "core/store/run_writer.h"
#include "core/train/data_order.h"
#include "core/train/device_step.h"
#include "core/train/layerwise_math.h"
#include "core/train/training_state.h"
#include "core/util/number_text.h"

namespace descentlab::train {

torch::Device resolve_device(const std::string& name) {
  if (name == "cpu") return torch::kCPU;
  if (name == "cuda") {
    if (!torch::cuda::is_available()) throw Error("device \"cuda\" was asked for, but LibTorch sees no CUDA device");
    return torch::kCUDA;
  }
  if (name == "auto") return torch::cuda::is_available() ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
  throw Error("unknown device \"" + name + "\" (known: auto, cpu, cuda)");
}

struct LayerwiseTrainer::State {
  torch::optim::AdamW optimizer;
  DataOrder order;
  torch::Tensor lambda;            // [L]
  torch::Tensor resilient_slack;   // [L]
  std::vector<int64_t> held_out;   // training indices kept out for per-epoch dual steps
  std::vector<int64_t> trainable;  // training indices the data order walks through
  std::vector<double> histogram_edges = eval::log_spaced_edges();
  // Metric sums between two reads, on the device (no host sync per step). Checkpointed, so that a run stopped
  // between two reads and resumed reports the same curve as one that never stopped.
  torch::Tensor loss_sum, slack_sum, lagrangian_sum, accumulated;

  State(std::vector<torch::Tensor> parameters, const config::TrainConfig& train, int64_t samples, uint64_t seed)
      : optimizer(std::move(parameters), torch::optim::AdamWOptions(train.lr).weight_decay(train.weight_decay)),
        order(seed, samples) {}
};

namespace {

std::vector<double> to_vector(const torch::Tensor& tensor) {
  const torch::Tensor cpu = tensor.detach().to(torch::kCPU, torch::kFloat64).contiguous();
  return std::vector<double>(cpu.data_ptr<double>(), cpu.data_ptr<double>() + cpu.numel());
}

}  // namespace

LayerwiseTrainer::LayerwiseTrainer(config::ExperimentConfig config, LayerwiseTask& task, torch::Device device)
    : config_(std::move(config)), task_(task), device_(device) {
  const int64_t samples = task_.train_size();
  const bool held_out = config_.constraints.enabled && config_.constraints.dual_update == "epoch";
  const int64_t kept = held_out ? std::min<int64_t>(config_.constraints.constraint_batch, samples / 2) : 0;
  if (samples - kept < 1) throw TrainingError("the training set is empty");
  state_ = std::make_unique<State>(task_.module()->parameters(), config_.train, samples - kept, config_.train.seed);
  for (int64_t i = 0; i < samples - kept; ++i) state_->trainable.push_back(i);
  for (int64_t i = samples - kept; i < samples; ++i) state_->held_out.push_back(i);
  const int64_t layers = task_.model().layers();
  state_->lambda = torch::zeros({layers}, torch::TensorOptions().dtype(torch::kFloat32).device(device_));
  state_->resilient_slack = torch::zeros_like(state_->lambda);
  const auto sums = torch::TensorOptions().dtype(torch::kFloat64).device(device_);
  state_->loss_sum = torch::zeros({layers + 1}, sums);
  state_->slack_sum = torch::zeros({layers}, sums);
  state_->lagrangian_sum = torch::zeros({}, sums);
  state_->accumulated = torch::zeros({}, torch::TensorOptions().dtype(torch::kInt64));
}

LayerwiseTrainer::~LayerwiseTrainer() = default;

int64_t LayerwiseTrainer::total_steps() const {
  return config_.train.epochs * state_->order.batches_per_epoch(config_.train.batch_size);
}

void LayerwiseTrainer::emit_scalar(const std::string& name, double value) {
  sinks_.scalar(name, step_, value);
}

void LayerwiseTrainer::emit_vector(const std::string& name, const std::vector<double>& values) {
  sinks_.vector(name, step_, values);
}

void LayerwiseTrainer::checkpoint(const std::vector<std::string>& labels) {
  if (!writer_ || labels.empty()) return;
  store::CheckpointData data =
      capture_training_state(*task_.module(), state_->optimizer, state_->order, step_, state_->order.epoch());
  data.sections["dual"]["lambda"] = store::to_blob(state_->lambda);
  data.sections["dual"]["resilient_slack"] = store::to_blob(state_->resilient_slack);
  data.sections["progress"]["loss_sum"] = store::to_blob(state_->loss_sum);
  data.sections["progress"]["slack_sum"] = store::to_blob(state_->slack_sum);
  data.sections["progress"]["lagrangian_sum"] = store::to_blob(state_->lagrangian_sum);
  data.sections["progress"]["accumulated"] = store::to_blob(state_->accumulated);
  data.extra_json = nlohmann::json{{"experiment", config_.name},
                                   {"optimizer", "adamw"},
                                   {"lr", config_.train.lr},
                                   {"weight_decay", config_.train.weight_decay},
                                   {"best_metric", has_best_ ? nlohmann::json(best_metric_) : nlohmann::json()}}
                        .dump();
  // One capture serves every label, and one commit writes them all (the last save waits for it).
  for (size_t i = 0; i + 1 < labels.size(); ++i) writer_->save_checkpoint(labels[i], data, /*wait=*/false);
  writer_->save_checkpoint(labels.back(), std::move(data));
}

void LayerwiseTrainer::resume_from(const store::CheckpointData& checkpoint, const std::string& path,
                                   const std::string& label) {
  restore_training_state(checkpoint, *task_.module(), state_->optimizer, state_->order, path, label);
  const auto dual = checkpoint.sections.find("dual");
  if (dual == checkpoint.sections.end() || !dual->second.count("lambda") || !dual->second.count("resilient_slack")) {
    throw store::RunFileError(store::RunFileError::Kind::MissingObject, path, "/checkpoints/" + label + "/dual",
                              "the dual variables are missing");
  }
  const torch::Tensor lambda = store::to_tensor(dual->second.at("lambda"));
  if (lambda.sizes() != state_->lambda.sizes()) {
    throw store::RunFileError(store::RunFileError::Kind::ShapeMismatch, path, "/checkpoints/" + label + "/dual/lambda",
                              "does not match the model's layers");
  }
  state_->lambda.copy_(lambda);
  state_->resilient_slack.copy_(store::to_tensor(dual->second.at("resilient_slack")));
  const auto progress = checkpoint.sections.find("progress");
  if (progress != checkpoint.sections.end()) {
    const auto restore = [&](const char* name, torch::Tensor& into) {
      const auto found = progress->second.find(name);
      if (found == progress->second.end()) return;
      const torch::Tensor value = store::to_tensor(found->second);
      if (value.sizes() == into.sizes()) into.copy_(value);
    };
    restore("loss_sum", state_->loss_sum);
    restore("slack_sum", state_->slack_sum);
    restore("lagrangian_sum", state_->lagrangian_sum);
    restore("accumulated", state_->accumulated);
  }
  step_ = checkpoint.step;
  const auto extra = nlohmann::json::parse(checkpoint.extra_json, nullptr, false);
  if (extra.is_object() && extra.contains("best_metric") && extra["best_metric"].is_number()) {
    best_metric_ = extra["best_metric"].get<double>();
    has_best_ = true;
  }
}

Evaluation LayerwiseTrainer::evaluate() {
  torch::NoGradGuard no_grad;
  auto& module = *task_.module();
  module.eval();
  const int64_t total = task_.test_size();
  const int64_t batch_size = std::max<int64_t>(config_.train.batch_size, 64);
  const int64_t layers = task_.model().layers();
  torch::Tensor loss_sum = torch::zeros({layers + 1}, torch::TensorOptions().dtype(torch::kFloat64).device(device_));
  torch::Tensor descending_sum = torch::zeros({layers}, loss_sum.options());
  torch::Tensor metric_sum = torch::zeros({}, loss_sum.options());
  for (int64_t start = 0; start < total; start += batch_size) {
    const int64_t count = std::min(batch_size, total - start);
    const Batch batch = task_.test_batch(start, count);
    torch::Tensor prediction;
    const torch::Tensor losses = per_sample_layer_losses(task_, batch, &prediction).to(torch::kFloat64);
    loss_sum += losses.sum(1);
    descending_sum += descending_frequency(losses) * static_cast<double>(count);
    metric_sum += task_.metric_terms(prediction, batch).sum();
  }
  module.train();
  Evaluation evaluation;
  evaluation.layer_loss = to_vector(loss_sum / static_cast<double>(total));
  evaluation.descending_frequency = to_vector(descending_sum / static_cast<double>(total));
  evaluation.metric = task_.finish_metric(metric_sum.item<double>() / static_cast<double>(total));
  evaluation.loss = evaluation.layer_loss.back();
  return evaluation;
}

void LayerwiseTrainer::dual_step_on_held_out() {
  torch::NoGradGuard no_grad;
  auto& module = *task_.module();
  module.eval();
  const Batch batch = task_.train_batch(state_->held_out);
  const torch::Tensor f = per_sample_layer_losses(task_, batch).mean(1);
  module.train();
  const double alpha = scheduled_alpha(config_.constraints.alpha_schedule, config_.constraints.alpha,
                                       config_.constraints.alpha_final, state_->order.epoch(), config_.train.epochs);
  const torch::Tensor alphas = torch::full_like(state_->lambda, alpha);
  const torch::Tensor slack = constraint_slack(f.to(torch::kFloat32), alphas, false);
  const auto& c = config_.constraints;
  dual_step(state_->lambda, slack, c.resilient ? state_->resilient_slack : torch::Tensor(), c.dual_lr);
  if (c.resilient) resilient_step(state_->resilient_slack, state_->lambda, c.resilient_cost, c.resilient_lr);
}

TrainingResult LayerwiseTrainer::run() {
  const auto& c = config_.constraints;
  const auto& t = config_.train;
  auto& module = *task_.module();
  module.train();
  const int64_t layers = task_.model().layers();
  const int64_t batches_per_epoch = state_->order.batches_per_epoch(t.batch_size);
  const auto started = std::chrono::steady_clock::now();
  const int64_t first_step = step_;

  TrainingResult result;
  torch::Tensor& f_sum = state_->loss_sum;
  torch::Tensor& slack_sum = state_->slack_sum;
  torch::Tensor& lagrangian_sum = state_->lagrangian_sum;
  int64_t accumulated = state_->accumulated.item<int64_t>();
  double interval_start = wall_clock_seconds();
  int64_t interval_samples = 0;

  if (step_ == 0 && writer_) {
    sinks_.histograms(eval::weight_histograms(module, 0, state_->histogram_edges));
  }

  // A checkpoint taken at the end of an epoch resumes at the start of the next one.
  int64_t epoch =
      state_->order.position() >= state_->order.dataset_size() ? state_->order.epoch() + 1 : state_->order.epoch();
  for (; epoch < t.epochs; ++epoch) {
    const double alpha = scheduled_alpha(c.alpha_schedule, c.alpha, c.alpha_final, epoch, t.epochs);
    const torch::Tensor alphas = torch::full({layers}, alpha, torch::TensorOptions().device(device_));
    const bool dual_active = c.enabled && epoch >= c.dual_warmup_epochs;
    const int64_t first_batch =
        state_->order.epoch() == epoch ? (state_->order.position() + t.batch_size - 1) / t.batch_size : 0;
    for (int64_t b = first_batch; b < batches_per_epoch; ++b) {
      if (control_ && !control_->proceed()) {
        result.stopped = true;
        break;
      }
      std::vector<int64_t> indices = state_->order.next_batch(t.batch_size);
      for (auto& index : indices) index = state_->trainable[static_cast<size_t>(index)];
      const Batch batch = task_.train_batch(indices);
      const torch::Tensor f = per_sample_layer_losses(task_, batch).mean(1);
      torch::Tensor objective;
      torch::Tensor slack;
      if (c.enabled) {
        slack = constraint_slack(f, alphas, c.stop_gradient);
        objective = lagrangian(f, slack, state_->lambda);
      } else {
        objective = f[-1];
      }
      state_->optimizer.zero_grad();
      objective.backward();
      if (t.grad_clip > 0) clip_gradient_norm(module.parameters(), t.grad_clip);
      state_->optimizer.step();
      if (dual_active && c.dual_update == "batch") {
        dual_step(state_->lambda, slack, c.resilient ? state_->resilient_slack : torch::Tensor(), c.dual_lr);
        if (c.resilient) resilient_step(state_->resilient_slack, state_->lambda, c.resilient_cost, c.resilient_lr);
      }
      ++step_;
      {
        torch::NoGradGuard no_grad;
        f_sum += f.detach().to(torch::kFloat64);
        lagrangian_sum += objective.detach().to(torch::kFloat64);
        if (slack.defined()) slack_sum += slack.detach().to(torch::kFloat64);
      }
      ++accumulated;
      interval_samples += static_cast<int64_t>(indices.size());
      if (step_ % t.metric_interval == 0 || b + 1 == batches_per_epoch) {
        const std::vector<double> layer_loss = to_vector(f_sum / static_cast<double>(accumulated));
        for (size_t l = 0; l < layer_loss.size(); ++l) {
          if (!std::isfinite(layer_loss[l])) {
            sinks_.flush();
            throw TrainingError("the loss of layer " + std::to_string(l) + " became " + number_text(layer_loss[l]) +
                                " at step " + std::to_string(step_) +
                                " (try a smaller lr or grad_clip); the last good state is the checkpoint \"latest\"");
          }
        }
        const double elapsed = wall_clock_seconds() - interval_start;
        emit_scalar("loss", layer_loss.back());
        emit_scalar("lagrangian", lagrangian_sum.item<double>() / static_cast<double>(accumulated));
        emit_vector("layer_loss", layer_loss);
        if (c.enabled) {
          emit_vector("slack", to_vector(slack_sum / static_cast<double>(accumulated)));
          emit_vector("lambda", to_vector(state_->lambda));
          if (c.resilient) emit_vector("resilient_slack", to_vector(state_->resilient_slack));
          emit_scalar("alpha", alpha);
        }
        emit_scalar("lr", t.lr);
        emit_scalar("epoch",
                    static_cast<double>(epoch) + static_cast<double>(b + 1) / static_cast<double>(batches_per_epoch));
        emit_scalar("throughput", elapsed > 0 ? static_cast<double>(interval_samples) / elapsed : 0.0);
        f_sum.zero_();
        slack_sum.zero_();
        lagrangian_sum.zero_();
        accumulated = 0;
        state_->accumulated.fill_(0);
        interval_samples = 0;
        interval_start = wall_clock_seconds();
      }
      if (t.histogram_interval > 0 && step_ % t.histogram_interval == 0) {
        sinks_.histograms(eval::weight_histograms(module, step_, state_->histogram_edges));
      }
    }
    if (result.stopped) break;
    if (dual_active && c.dual_update == "epoch") dual_step_on_held_out();

    const Evaluation test = evaluate();
    emit_vector("test_layer_loss", test.layer_loss);
    emit_vector("test_descending_frequency", test.descending_frequency);
    emit_scalar("test_loss", test.loss);
    emit_scalar("test_" + task_.metric_name(), test.metric);
    if (t.histogram_interval == 0) {
      sinks_.histograms(eval::weight_histograms(module, step_, state_->histogram_edges));
    }
    result.test = test;
    result.epochs_completed = epoch + 1;
    const bool better = task_.metric_name() == "accuracy" ? test.metric > best_metric_ : test.metric < best_metric_;
    std::vector<std::string> labels{"latest"};
    if (!has_best_ || better) {
      best_metric_ = test.metric;
      has_best_ = true;
      labels.insert(labels.begin(), "best");
    }
    checkpoint(labels);
    sinks_.flush();
  }
  if (result.stopped) {
    state_->accumulated.fill_(accumulated);
    checkpoint({"latest"});  // a cancelled run loses nothing: resume continues mid-epoch
    sinks_.flush();
  }
  result.steps = step_;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  result.steps_per_second = result.seconds > 0 ? static_cast<double>(step_ - first_step) / result.seconds : 0.0;
  result.lambda = to_vector(state_->lambda);
  return result;
}

}  // namespace descentlab::train
