#include "core/train/sparse_trainer.h"

#include <torch/torch.h>

#include <chrono>
#include <cmath>
#include <utility>

#include "core/config/json_reader.h"
#include "core/dist/process_group.h"
#include "core/eval/test_pass.h"
#include "core/eval/weight_histograms.h"
#include "core/optim/factory.h"
#include "core/optim/mirror_adamw.h"
#include "core/record/metrics.h"
#include "core/train/checkpoint_tensors.h"
#include "core/train/device_step.h"
#include "core/train/random_stream.h"

namespace descentlab::train {
namespace metric = record::metric;
namespace {

optim::MaskScope mask_scope(config::SparsityScope scope) {
  return scope == config::SparsityScope::global ? optim::MaskScope::global : optim::MaskScope::per_tensor;
}

}  // namespace

struct SparseTrainer::State {
  std::unique_ptr<torch::optim::Optimizer> optimizer;
  std::vector<optim::PrunableTensor> prunable;
  std::unique_ptr<AcdcSchedule> schedule;
  AcdcPhase phase = AcdcPhase::dense;
  optim::MaskSet masks;                      // while compressed
  optim::MaskSet previous_masks;             // of the previous compression (for the churn)
  std::vector<torch::Tensor> last_snapshot;  // prunable weights at the previous compression (for sign flips)
  Meter* loss = nullptr;                     // the metric interval's training loss (meters.h)
  SparseEvaluation last_test;
  double frontier_seconds = 0.0;  // this process's time in the live frontier (its cost, in the summary)
  int64_t frontier_evaluations = 0;
  bool compress_again = false;  // a branch's new target or scope: the masks are made again at its first step

  State(std::vector<torch::Tensor> parameters, const config::ExperimentConfig& config)
      : optimizer(optim::make_optimizer(std::move(parameters), config)) {}
};

namespace {

double phase_code(AcdcPhase phase) {
  return phase == AcdcPhase::dense ? 0.0 : (phase == AcdcPhase::compressed ? 1.0 : 2.0);
}

AcdcPhase phase_from_code(int64_t code) {
  return code == 1 ? AcdcPhase::compressed : (code == 2 ? AcdcPhase::decompressed : AcdcPhase::dense);
}

void store_masks(record::CheckpointData& data, const std::string& section, const optim::MaskSet& masks,
                 const std::vector<optim::PrunableTensor>& prunable) {
  for (size_t i = 0; i < masks.keep.size(); ++i) {
    data.sections[section][prunable[i].name] = train::to_blob(masks.keep[i].to(torch::kUInt8));
  }
}

// Reads masks saved by store_masks; empty when the section is absent. Shapes are checked against the tensors.
optim::MaskSet load_masks(const CheckpointReader& checkpoint, const std::string& section,
                          const std::vector<optim::PrunableTensor>& prunable, torch::Device device) {
  optim::MaskSet masks;
  const CheckpointReader::Section* found = checkpoint.section(section);
  if (!found || found->empty()) return masks;
  for (const auto& tensor : prunable) {
    const record::TensorBlob& blob = checkpoint.require(section, tensor.name, "the mask is missing");
    const torch::Tensor keep =
        checkpoint.shaped_like(blob, section, tensor.name, tensor.parameter, CheckpointReader::Values::Any)
            .to(torch::kBool);
    masks.total += keep.numel();
    masks.pruned += keep.numel() - keep.sum().item<int64_t>();
    masks.keep.push_back(keep.to(device));
  }
  return masks;
}

}  // namespace

namespace {

int64_t training_samples(const tasks::SparseTask& task) {
  if (task.train_size() < 1) throw TrainingError("the training set is empty");
  return task.train_size();
}

}  // namespace

SparseTrainer::SparseTrainer(config::ExperimentConfig config, tasks::SparseTask& task, torch::Device device)
    : Trainer(std::move(config), device, training_samples(task), task.shuffle_window()), task_(task) {
  state_ = std::make_unique<State>(task_.module()->parameters(), config_);
  optim::PruneSelection selection;
  if (config_.sparsity.exclude_embeddings_and_readout)
    selection.excluded_prefixes = task_.embedding_and_readout_prefixes();
  state_->prunable = optim::select_prunable(*task_.module(), selection);
  if (config_.sparsity.method == config::SparsityMethod::acdc) {
    if (state_->prunable.empty()) throw TrainingError("AC/DC: the model has no prunable weights under this selection");
    AcdcFractions fractions;
    fractions.warmup = config_.sparsity.warmup;
    fractions.phase = config_.sparsity.phase;
    fractions.alternate_until = config_.sparsity.alternate_until;
    fractions.decompressed_until = config_.sparsity.decompressed_until;
    const int64_t units = config_.sparsity.units == config::PhaseUnits::epochs ? config_.train.epochs : total_steps();
    state_->schedule = std::make_unique<AcdcSchedule>(units, fractions);
  }
  state_->loss = &add_meter("loss_sum", {});
}

SparseTrainer::~SparseTrainer() = default;

torch::nn::Module& SparseTrainer::module() {
  return *task_.module();
}

torch::optim::Optimizer& SparseTrainer::optimizer() {
  return *state_->optimizer;
}
const std::vector<optim::PrunableTensor>& SparseTrainer::prunable() const {
  return state_->prunable;
}
const AcdcSchedule* SparseTrainer::schedule() const {
  return state_->schedule.get();
}
AcdcPhase SparseTrainer::phase() const {
  return state_->phase;
}

void SparseTrainer::emit_histograms() {
  Trainer::emit_histograms();
  vector(metric::kNearZeroShare, eval::near_zero_shares(module(), eval::default_near_zero_thresholds()));
}

void SparseTrainer::enter_phase(AcdcPhase phase) {
  State& s = *state_;
  if (phase == AcdcPhase::compressed) {
    s.masks = optim::magnitude_masks(s.prunable, config_.sparsity.target, mask_scope(config_.sparsity.scope));
    const std::vector<torch::Tensor> now = optim::snapshot(s.prunable);
    if (!s.previous_masks.empty())
      scalar(metric::kMaskChurn, static_cast<double>(optim::mask_hamming_distance(s.previous_masks, s.masks)));
    if (!s.last_snapshot.empty() && !s.previous_masks.empty()) {
      scalar(metric::kSignFlips,
             static_cast<double>(optim::count_sign_flips(s.last_snapshot, now, s.previous_masks, s.masks)));
    }
    // The test metric just before and right after the mask (issue 18), on sparsity.compression_samples samples: how
    // much of the dense model's standing the compression itself costs, apart from the recovery that follows. Evaluation
    // draws no random numbers and leaves the model in training mode, so the run trains exactly as it would without it.
    const int64_t samples = config_.sparsity.compression_samples;
    scalar(record::compression_series(metric_name(), false), evaluate(samples).metric);
    optim::apply_masks(s.prunable, s.masks);
    // Data parallel: the masks come from identical weights on every rank; checked, since a difference would grow.
    check_replicas("after the compression at step " + std::to_string(step()));
    scalar(record::compression_series(metric_name(), true), evaluate(samples).metric);
    s.last_snapshot = now;
  } else if (s.phase == AcdcPhase::compressed) {
    // Pruned weights come back as the zeros they are; the optimizer starts from fresh moments. (Only a branch's
    // longer warm-up goes from compressed to dense.)
    s.previous_masks = std::move(s.masks);
    s.masks = optim::MaskSet{};
    s.optimizer->state().clear();
  }
  s.phase = phase;
}

void SparseTrainer::save_state(record::CheckpointData& data) const {
  const State& s = *state_;
  data.sections["acdc"]["phase"] =
      train::to_blob(torch::tensor(static_cast<int64_t>(phase_code(s.phase)), torch::kInt64));
  store_masks(data, "masks", s.masks, s.prunable);
  store_masks(data, "previous_masks", s.previous_masks, s.prunable);
  for (size_t i = 0; i < s.last_snapshot.size(); ++i) {
    data.sections["compression_snapshot"][s.prunable[i].name] = train::to_blob(s.last_snapshot[i]);
  }
}

void SparseTrainer::describe_checkpoint(nlohmann::json& extra) const {
  if (const auto* mirrored = dynamic_cast<const optim::MirroredAdamW*>(state_->optimizer.get())) {
    extra["mirror"] = nlohmann::json::parse(mirrored->describe_json());
  }
}

void SparseTrainer::restore_state(const CheckpointReader& checkpoint) {
  State& s = *state_;
  if (checkpoint.find("acdc", "phase")) {
    const torch::Tensor code = checkpoint.one_value("acdc", "phase");
    const int64_t value = code.is_floating_point() ? -1 : code.item<int64_t>();
    if (value < 0 || value > 2) {
      checkpoint.corrupt("acdc/phase",
                         "is " + std::to_string(value) + "; AC/DC phases are 0 dense, 1 compressed, 2 decompressed");
    }
    s.phase = phase_from_code(value);
  }
  s.masks = load_masks(checkpoint, "masks", s.prunable, device_);
  s.previous_masks = load_masks(checkpoint, "previous_masks", s.prunable, device_);
  if (s.phase == AcdcPhase::compressed && s.masks.empty()) {
    checkpoint.missing("masks", "the run was compressed but its masks are missing");
  }
  s.last_snapshot.clear();
  if (const CheckpointReader::Section* snapshot = checkpoint.section("compression_snapshot")) {
    for (const auto& tensor : s.prunable) {
      if (snapshot->count(tensor.name))
        s.last_snapshot.push_back(train::to_tensor(snapshot->at(tensor.name)).to(device_));
    }
    if (s.last_snapshot.size() != s.prunable.size()) s.last_snapshot.clear();
  }
}

namespace {

// The metric and loss on the first `samples` test samples (0: all). With a data-parallel `group`, each rank
// evaluates its part of them and the sums are added over ranks.
SparseEvaluation evaluate_task(tasks::SparseTask& task, int64_t batch_size, int64_t samples_limit = 0,
                               dist::Group* group = nullptr) {
  const int64_t total = samples_limit > 0 ? std::min(samples_limit, task.test_size()) : task.test_size();
  torch::Tensor metric_sum, loss_sum;
  int64_t terms = 0, samples = 0;
  const auto range = group ? dist::part_of(total, group->rank(), group->size()) : std::pair<int64_t, int64_t>{0, total};
  eval::test_pass(*task.module(), range.first, range.second, batch_size, [&](int64_t start, int64_t count) {
    const tasks::Batch batch = task.test_batch(start, count);
    const torch::Tensor logits = task.forward(batch.input);
    auto [sum, n] = task.metric_terms(logits, batch);
    const torch::Tensor loss = task.loss(logits, batch).to(torch::kFloat64) * static_cast<double>(count);
    metric_sum = metric_sum.defined() ? metric_sum + sum : sum;
    loss_sum = loss_sum.defined() ? loss_sum + loss : loss;
    terms += n;
    samples += count;
  });
  torch::NoGradGuard no_grad;
  if (group) {
    const auto sums = torch::TensorOptions().dtype(torch::kFloat64);
    std::vector<torch::Tensor> message{
        metric_sum.defined() ? metric_sum.to(torch::kCPU, torch::kFloat64).reshape({1}) : torch::zeros({1}, sums),
        loss_sum.defined() ? loss_sum.to(torch::kCPU, torch::kFloat64).reshape({1}) : torch::zeros({1}, sums),
        torch::tensor({terms, samples}, torch::kInt64)};
    group->all_reduce(message, dist::ReduceOp::sum, "the test evaluation");
    metric_sum = message[0][0];
    loss_sum = message[1][0];
    terms = message[2][0].item<int64_t>();
    samples = message[2][1].item<int64_t>();
  }
  SparseEvaluation evaluation;
  if (samples == 0) return evaluation;
  evaluation.loss = loss_sum.item<double>() / static_cast<double>(samples);
  evaluation.metric = task.finish_metric(metric_sum.item<double>() / static_cast<double>(terms));
  return evaluation;
}

}  // namespace

int64_t evaluation_batch_size(const config::ExperimentConfig& config) {
  return std::max<int64_t>(config.train.batch_size, 128);
}

SparseEvaluation SparseTrainer::evaluate(int64_t samples) {
  return evaluate_task(task_, evaluation_batch_size(config_), samples, data_parallel());
}

int64_t SparseTrainer::periodic_interval() const {
  return state_->prunable.empty() ? 0 : config_.sparsity.frontier_interval;
}

// The live sparsity frontier: the task's metric of one-shot per-tensor magnitude pruning of a copy of the weights at
// each frontier sparsity (the weights are restored bit for bit), on the same first frontier_samples test samples
// every time.
void SparseTrainer::periodic_evaluation() {
  const auto started = std::chrono::steady_clock::now();
  const auto& levels = config_.sparsity.frontier_sparsities;
  const auto rows = one_shot_prune(task_, levels, state_->prunable, optim::MaskScope::per_tensor,
                                   evaluation_batch_size(config_), config_.sparsity.frontier_samples, data_parallel());
  std::vector<double> achieved, metric_values, losses;
  for (const auto& row : rows) {
    achieved.push_back(row.achieved);
    metric_values.push_back(row.evaluation.metric);
    losses.push_back(row.evaluation.loss);
  }
  vector(metric::kFrontierSparsity, levels);
  vector(metric::kFrontierAchieved, achieved);
  vector(record::frontier_series(metric_name()), metric_values);
  vector(metric::kFrontierLoss, losses);
  state_->frontier_seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  ++state_->frontier_evaluations;
}

void SparseTrainer::before_batch(int64_t epoch) {
  State& s = *state_;
  const bool again = std::exchange(s.compress_again, false);
  if (!s.schedule) return;
  const AcdcPhase phase = s.schedule->phase_at(config_.sparsity.units == config::PhaseUnits::epochs ? epoch : step());
  if (phase != s.phase || (again && phase == AcdcPhase::compressed)) enter_phase(phase);
}

// A branch that changes the sparsity: the schedule is the child's (made from its settings), so its phase at the branch
// step takes over at the first step (before_batch). A compressed state under a new target or scope is compressed
// again there, at the new target; with AC/DC switched off, the masks are let go and the run is dense from the branch.
void SparseTrainer::continue_branch(const config::ExperimentConfig& parent) {
  State& s = *state_;
  if (s.phase != AcdcPhase::compressed) return;
  if (!s.schedule) {
    s.previous_masks = std::move(s.masks);
    s.masks = optim::MaskSet{};
    s.phase = AcdcPhase::dense;
    return;
  }
  s.compress_again =
      parent.sparsity.target != config_.sparsity.target || parent.sparsity.scope != config_.sparsity.scope;
}

void SparseTrainer::train_step(const std::vector<int64_t>& indices, int64_t) {
  State& s = *state_;
  // The forward pass's dropout draws from this run's random stream (random_stream.h); backward and step draw nothing.
  RandomStream::Lease draws = lease_random_stream();
  const tasks::Batch batch = task_.train_batch(indices);
  const torch::Tensor loss = task_.loss(task_.forward(batch.input), batch);
  draws.release();
  s.optimizer->zero_grad();
  loss.backward();
  synchronize_gradients();  // data parallel: the global batch's gradient on every rank
  if (config_.train.grad_clip > 0) clip_gradient_norm(module().parameters(), config_.train.grad_clip);
  s.optimizer->step();
  if (s.phase == AcdcPhase::compressed) optim::apply_masks(s.prunable, s.masks);
  torch::NoGradGuard no_grad;
  add(*s.loss, loss);
}

void SparseTrainer::report_interval(int64_t steps, int64_t) {
  State& s = *state_;
  const double mean_loss = s.loss->mean(steps).front();
  require_finite(mean_loss, "training loss", "with " + optimizer_name() + " (try a smaller lr or alpha)");
  scalar(metric::kLoss, mean_loss);
  if (!s.prunable.empty()) scalar(metric::kSparsity, optim::count_zeros(s.prunable).share());
  if (s.schedule) scalar(metric::kAcdcPhase, phase_code(s.phase));
}

EpochTest SparseTrainer::evaluate_epoch() {
  state_->last_test = evaluate();
  return {state_->last_test.metric, state_->last_test.loss};
}

// "best" only among models at the run's final sparsity regime: during AC/DC a dense phase would always win.
bool SparseTrainer::best_is_comparable() const {
  return !state_->schedule || state_->phase == AcdcPhase::compressed;
}

nlohmann::json SparseTrainer::summary() const {
  const State& s = *state_;
  auto& model = *task_.module();
  return {{"optimizer", optimizer_name()},
          {"sparsity", s.prunable.empty() ? 0.0 : optim::count_zeros(s.prunable).share()},
          {"near_zero_share",
           {{"thresholds", eval::default_near_zero_thresholds()},
            {"share", eval::near_zero_shares(model, eval::default_near_zero_thresholds())}}},
          {"frontier", {{"evaluations", s.frontier_evaluations}, {"seconds", s.frontier_seconds}}}};
}

std::vector<OneShotRow> one_shot_prune(tasks::SparseTask& task, const std::vector<double>& sparsities,
                                       const optim::PruneSelection& selection, optim::MaskScope scope,
                                       int64_t batch_size, int64_t samples) {
  return one_shot_prune(task, sparsities, optim::select_prunable(*task.module(), selection), scope, batch_size,
                        samples);
}

std::vector<OneShotRow> one_shot_prune(tasks::SparseTask& task, const std::vector<double>& sparsities,
                                       const std::vector<optim::PrunableTensor>& prunable, optim::MaskScope scope,
                                       int64_t batch_size, int64_t samples, dist::Group* group) {
  if (prunable.empty()) throw Error("one-shot pruning: the model has no prunable weights under this selection");
  const std::vector<torch::Tensor> original = optim::snapshot(prunable);
  const auto restore = [&] {
    torch::NoGradGuard no_grad;
    for (size_t i = 0; i < prunable.size(); ++i) {
      torch::Tensor parameter = prunable[i].parameter;
      parameter.copy_(original[i]);
    }
  };
  std::vector<OneShotRow> rows;
  try {
    for (double sparsity : sparsities) {
      OneShotRow row;
      row.sparsity = sparsity;
      optim::apply_masks(prunable, optim::magnitude_masks(prunable, sparsity, scope));
      row.achieved = optim::count_zeros(prunable).share();
      row.evaluation = evaluate_task(task, batch_size, samples, group);
      restore();
      rows.push_back(row);
    }
  } catch (...) {
    restore();  // a failed evaluation never leaves a pruned model behind
    throw;
  }
  return rows;
}

}  // namespace descentlab::train
