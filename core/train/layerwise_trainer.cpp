#include "core/train/layerwise_trainer.h"

#include <torch/torch.h>

#include "core/eval/test_pass.h"
#include "core/optim/factory.h"
#include "core/record/metrics.h"
#include "core/train/checkpoint_tensors.h"
#include "core/train/device_step.h"
#include "core/train/layerwise_math.h"
#include "core/train/random_stream.h"

namespace descentlab::train {
namespace metric = record::metric;

struct LayerwiseTrainer::State {
  std::unique_ptr<torch::optim::Optimizer> optimizer;  // optim::make_optimizer's (config: AdamW)
  torch::Tensor lambda;                                // [L]
  torch::Tensor resilient_slack;                       // [L]
  std::vector<int64_t> held_out;                       // training indices kept out for per-epoch dual steps
  std::vector<int64_t> trainable;                      // training indices the data order walks through
  // The interval metrics (meters.h): checkpointed, so that a run stopped between two reads and resumed reports the
  // same curve as one that never stopped.
  Meter* lagrangian = nullptr;  // the objective minimised
  Meter* layer_loss = nullptr;  // [L + 1]: every layer's training loss
  Meter* slack = nullptr;       // [L]: each constraint's slack (reported when the constraints are on)
  torch::Tensor alphas;         // [L]: α of the epoch `alphas_epoch`, on the device
  int64_t alphas_epoch = -1;
  Evaluation last_test;

  State(std::vector<torch::Tensor> parameters, const config::ExperimentConfig& config)
      : optimizer(optim::make_optimizer(std::move(parameters), config)) {}
};

namespace {

std::vector<double> to_vector(const torch::Tensor& tensor) {
  const torch::Tensor cpu = tensor.detach().to(torch::kCPU, torch::kFloat64).contiguous();
  return std::vector<double>(cpu.data_ptr<double>(), cpu.data_ptr<double>() + cpu.numel());
}

// Samples kept out of training for the per-epoch dual step (constraints.dual_update = "epoch").
int64_t held_out_count(const config::ExperimentConfig& config, int64_t samples) {
  const bool held_out = config.constraints.enabled && config.constraints.dual_update == config::DualUpdate::epoch;
  return held_out ? std::min<int64_t>(config.constraints.constraint_batch, samples / 2) : 0;
}

int64_t trainable_count(const config::ExperimentConfig& config, const tasks::LayerwiseTask& task) {
  const int64_t trainable = task.train_size() - held_out_count(config, task.train_size());
  if (trainable < 1) throw TrainingError("the training set is empty");
  return trainable;
}

}  // namespace

LayerwiseTrainer::LayerwiseTrainer(config::ExperimentConfig config, tasks::LayerwiseTask& task, torch::Device device)
    : Trainer(config, device, trainable_count(config, task), task.shuffle_window()), task_(task) {
  const int64_t samples = task_.train_size();
  const int64_t trainable = order().dataset_size();  // the data order walks the trainable samples only
  state_ = std::make_unique<State>(task_.module()->parameters(), config_);
  for (int64_t i = 0; i < trainable; ++i) state_->trainable.push_back(i);
  for (int64_t i = trainable; i < samples; ++i) state_->held_out.push_back(i);
  const int64_t layers = task_.layers();
  state_->lambda = torch::zeros({layers}, torch::TensorOptions().dtype(torch::kFloat32).device(device_));
  state_->resilient_slack = torch::zeros_like(state_->lambda);
  state_->lagrangian = &add_meter("lagrangian_sum", {}, metric::kLagrangian);
  state_->layer_loss = &add_meter("loss_sum", {layers + 1}, metric::kLayerLoss);
  state_->slack = &add_meter("slack_sum", {layers}, config_.constraints.enabled ? metric::kSlack : nullptr);
}

LayerwiseTrainer::~LayerwiseTrainer() = default;

torch::nn::Module& LayerwiseTrainer::module() {
  return *task_.module();
}

torch::optim::Optimizer& LayerwiseTrainer::optimizer() {
  return *state_->optimizer;
}

double LayerwiseTrainer::alpha_of(int64_t epoch) const {
  const auto& c = config_.constraints;
  return scheduled_alpha(c.alpha_schedule, c.alpha, c.alpha_final, epoch, config_.train.epochs);
}

bool LayerwiseTrainer::dual_active(int64_t epoch) const {
  return config_.constraints.enabled && epoch >= config_.constraints.dual_warmup_epochs;
}

void LayerwiseTrainer::train_step(const std::vector<int64_t>& order_indices, int64_t epoch) {
  const auto& c = config_.constraints;
  State& s = *state_;
  if (s.alphas_epoch != epoch) {
    s.alphas = torch::full({task_.layers()}, alpha_of(epoch), torch::TensorOptions().device(device_));
    s.alphas_epoch = epoch;
  }
  std::vector<int64_t> indices = order_indices;
  for (auto& index : indices) index = s.trainable[static_cast<size_t>(index)];
  // The batch's noise and the forward pass's dropout draw from this run's random stream (random_stream.h).
  RandomStream::Lease draws = lease_random_stream();
  const tasks::Batch batch = task_.train_batch(indices);
  const torch::Tensor f = tasks::per_sample_layer_losses(task_, batch).mean(1);
  torch::Tensor objective;
  torch::Tensor slack;
  if (c.enabled) {
    slack = constraint_slack(f, s.alphas, c.stop_gradient);
    objective = lagrangian(f, slack, s.lambda);
  } else {
    objective = f[-1];
  }
  draws.release();  // the backward pass and the step draw nothing
  s.optimizer->zero_grad();
  objective.backward();
  // Data parallel: the gradients and the batch's slack of the whole global batch, the same on every rank (so is λ).
  torch::Tensor batch_slack = slack;
  if (slack.defined() && data_parallel()) {
    batch_slack = synchronize_gradients({weighted(slack.detach())}).front();
  } else {
    synchronize_gradients();
  }
  if (config_.train.grad_clip > 0) clip_gradient_norm(module().parameters(), config_.train.grad_clip);
  s.optimizer->step();
  if (dual_active(epoch) && c.dual_update == config::DualUpdate::batch) {
    dual_step(s.lambda, batch_slack, c.resilient ? s.resilient_slack : torch::Tensor(), c.dual_lr);
    if (c.resilient) resilient_step(s.resilient_slack, s.lambda, c.resilient_cost, c.resilient_lr);
  }
  torch::NoGradGuard no_grad;
  add(*s.layer_loss, f);
  add(*s.lagrangian, objective);
  if (slack.defined()) add(*s.slack, slack);
}

void LayerwiseTrainer::report_interval(int64_t steps, int64_t epoch) {
  const auto& c = config_.constraints;
  State& s = *state_;
  const std::vector<double> layer_loss = s.layer_loss->mean(steps);
  for (size_t l = 0; l < layer_loss.size(); ++l) {
    require_finite(layer_loss[l], "loss of layer " + std::to_string(l), "(try a smaller lr or grad_clip)");
  }
  scalar(metric::kLoss, layer_loss.back());
  report_meters(steps);  // the Lagrangian, every layer's loss and (constrained) the slacks
  if (c.enabled) {
    vector(metric::kLambda, to_vector(s.lambda));
    if (c.resilient) vector(metric::kResilientSlack, to_vector(s.resilient_slack));
    scalar(metric::kAlpha, alpha_of(epoch));
  }
}

void LayerwiseTrainer::end_epoch(int64_t epoch) {
  const auto& c = config_.constraints;
  if (!dual_active(epoch) || c.dual_update != config::DualUpdate::epoch) return;
  // The dual step on the held-out samples, at the α of the epoch the data order is in.
  torch::NoGradGuard no_grad;
  auto& model = module();
  model.eval();
  const tasks::Batch batch = task_.train_batch(state_->held_out);
  const torch::Tensor f = tasks::per_sample_layer_losses(task_, batch).mean(1);
  model.train();
  const torch::Tensor alphas = torch::full_like(state_->lambda, alpha_of(order().epoch()));
  const torch::Tensor slack = constraint_slack(f.to(torch::kFloat32), alphas, false);
  dual_step(state_->lambda, slack, c.resilient ? state_->resilient_slack : torch::Tensor(), c.dual_lr);
  if (c.resilient) resilient_step(state_->resilient_slack, state_->lambda, c.resilient_cost, c.resilient_lr);
}

Evaluation LayerwiseTrainer::evaluate() {
  const int64_t total = task_.test_size();
  const int64_t batch_size = std::max<int64_t>(config_.train.batch_size, 64);
  const int64_t layers = task_.layers();
  torch::Tensor loss_sum = torch::zeros({layers + 1}, torch::TensorOptions().dtype(torch::kFloat64).device(device_));
  torch::Tensor descending_sum = torch::zeros({layers}, loss_sum.options());
  torch::Tensor count_histogram =
      torch::zeros({layers + 1}, torch::TensorOptions().dtype(torch::kInt64).device(device_));
  torch::Tensor metric_sum = torch::zeros({}, loss_sum.options());
  const auto [first, end] = evaluation_range(total);  // this rank's part (all of it in one process)
  eval::test_pass(module(), first, end, batch_size, [&](int64_t start, int64_t count) {
    const tasks::Batch batch = task_.test_batch(start, count);
    torch::Tensor prediction;
    const torch::Tensor losses = tasks::per_sample_layer_losses(task_, batch, &prediction).to(torch::kFloat64);
    loss_sum += losses.sum(1);
    descending_sum += descending_frequency(losses) * static_cast<double>(count);
    count_histogram += torch::bincount(descending_layers(losses), {}, layers + 1);
    metric_sum += task_.metric_terms(prediction, batch).sum();
  });
  sum_over_ranks({loss_sum, descending_sum, count_histogram, metric_sum}, "the test evaluation");
  Evaluation evaluation;
  evaluation.layer_loss = to_vector(loss_sum / static_cast<double>(total));
  evaluation.descending_frequency = to_vector(descending_sum / static_cast<double>(total));
  evaluation.descent_counts = to_vector(count_histogram.to(torch::kFloat64));
  evaluation.metric = task_.finish_metric(metric_sum.item<double>() / static_cast<double>(total));
  evaluation.loss = evaluation.layer_loss.back();
  return evaluation;
}

EpochTest LayerwiseTrainer::evaluate_epoch() {
  state_->last_test = evaluate();
  vector(metric::kTestLayerLoss, state_->last_test.layer_loss);
  vector(metric::kTestDescendingFrequency, state_->last_test.descending_frequency);
  vector(metric::kTestDescentCounts, state_->last_test.descent_counts);
  return {state_->last_test.metric, state_->last_test.loss};
}

void LayerwiseTrainer::save_state(record::CheckpointData& data) const {
  data.sections["dual"]["lambda"] = train::to_blob(state_->lambda);
  data.sections["dual"]["resilient_slack"] = train::to_blob(state_->resilient_slack);
}

// λ and the resilient slack, checked before either is copied in: this model's shape, finite values, and >= 0 (every
// dual step projects onto λ >= 0).
void LayerwiseTrainer::restore_state(const CheckpointReader& checkpoint) {
  const std::string needed = "the dual variables are missing";
  checkpoint.require_section("dual", needed);
  const auto restored = [&](const char* name, const torch::Tensor& into) {
    return checkpoint.shaped_like(checkpoint.require("dual", name, needed), "dual", name, into,
                                  CheckpointReader::Values::NonNegative);
  };
  const torch::Tensor lambda = restored("lambda", state_->lambda);
  const torch::Tensor slack = restored("resilient_slack", state_->resilient_slack);
  torch::NoGradGuard no_grad;
  state_->lambda.copy_(lambda);
  state_->resilient_slack.copy_(slack);
}

nlohmann::json LayerwiseTrainer::summary() const {
  return {{"test",
           {{"layer_loss", state_->last_test.layer_loss},
            {"descending_frequency", state_->last_test.descending_frequency}}},
          {"lambda", to_vector(state_->lambda)}};
}

}  // namespace descentlab::train
