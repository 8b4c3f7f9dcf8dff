#include "core/train/trainer.h"

#include <torch/torch.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/config/json_reader.h"
#include "core/dist/process_group.h"
#include "core/eval/weight_histograms.h"
#include "core/optim/factory.h"
#include "core/record/metrics.h"
#include "core/train/checkpoint_tensors.h"
#include "core/train/training_state.h"
#include "core/util/error.h"
#include "core/util/number_text.h"

namespace descentlab::train {
namespace metric = record::metric;

torch::Device resolve_device(const std::string& name) {
  if (name == "cpu") return torch::kCPU;
  if (name == "cuda") {
    if (!torch::cuda::is_available()) throw Error("device \"cuda\" was asked for, but LibTorch sees no CUDA device");
    return torch::kCUDA;
  }
  if (name == "auto") return torch::cuda::is_available() ? torch::Device(torch::kCUDA) : torch::Device(torch::kCPU);
  throw Error("unknown device \"" + name + "\" (known: auto, cpu, cuda)");
}

torch::Device resolve_device(config::Device device) {
  return resolve_device(config::word(device));
}

// The samples and wall time of the metric interval in progress (throughput).
struct Trainer::Interval {
  double started = record::wall_clock_seconds();
  double held_at_start = 0.0;  // the control's paused seconds when the interval began
  int64_t samples = 0;
};

Trainer::Trainer(config::ExperimentConfig config, torch::Device device, int64_t samples, data::ShuffleWindow window)
    : config_(std::move(config)),
      device_(device),
      order_(config_.train.seed, samples, window),
      histogram_edges_(eval::log_spaced_edges()) {
  // The schedule over this run's steps: a warm-up in steps can only be checked against the run's length here.
  const auto& t = config_.train;
  try {
    lr_schedule_ = LrSchedule{t.lr_schedule, t.lr, warmup_steps_from(t.warmup, total_steps()), total_steps()};
    lr_schedule_.validate();
  } catch (const std::invalid_argument& error) {
    throw config::ConfigError(config_.name, "train.warmup", error.what());
  }
}

Trainer::~Trainer() = default;

int64_t Trainer::total_steps() const {
  return config_.train.epochs * order_.batches_per_epoch(config_.train.batch_size);
}

bool Trainer::higher_is_better() const {
  const record::MetricInfo* info = record::find_metric(record::test_series(metric_name()));
  if (!info || info->better == record::Direction::Neither) {
    throw Error("the test metric \"" + metric_name() + "\" has no direction in core/record/metrics.h");
  }
  return info->better == record::Direction::Higher;
}

void Trainer::emit_histograms() {
  histograms(eval::weight_histograms(module(), step_, histogram_edges_));
}

void Trainer::set_data_parallel(dist::Group* group) {
  replicas_.join(group, config_.name, config_.train.batch_size, order_.dataset_size(), config_.train.seed);
}

Meter& Trainer::add_meter(const std::string& name, const std::vector<int64_t>& shape, const char* reported) {
  for (const auto& meter : meters_.all()) {
    if (meter.name() == name) throw std::logic_error("the meter \"" + name + "\" is declared twice");
  }
  return meters_.add(name, torch::zeros(shape, torch::TensorOptions().dtype(torch::kFloat64).device(device_)),
                     reported);
}

void Trainer::report_meters(int64_t steps) {
  for (const auto& meter : meters_.all()) {
    if (!meter.reported()) continue;
    const std::vector<double> mean = meter.mean(steps);
    if (meter.sum().dim() == 0) {
      scalar(meter.reported(), mean.front());
    } else {
      vector(meter.reported(), mean);
    }
  }
}

torch::Tensor Trainer::weighted(const torch::Tensor& value) const {
  return replicas_.weighted(value);
}

std::vector<torch::Tensor> Trainer::synchronize_gradients(std::vector<torch::Tensor> sums) {
  return replicas_.synchronize_gradients(module(), std::move(sums), step_ + 1);
}

void Trainer::sum_over_ranks(std::vector<torch::Tensor> tensors, const std::string& what) {
  replicas_.sum_over_ranks(std::move(tensors), what, step_);
}

std::pair<int64_t, int64_t> Trainer::evaluation_range(int64_t total) const {
  return replicas_.evaluation_range(total);
}

void Trainer::check_replicas(const std::string& when) {
  replicas_.check(module(), when);
}

void Trainer::require_finite(double value, const std::string& what, const std::string& hint) {
  if (std::isfinite(value)) return;
  sinks_.flush();
  // A checkpoint this run resumed from, with none saved since, is not known to be good: its state (an optimizer's
  // moments, say) may itself be what turned the run non-finite.
  const bool only_the_resumed = latest_step_ >= 0 && latest_step_ == resumed_step_;
  const std::string last_good =
      only_the_resumed
          ? "it resumed from the checkpoint \"latest\" (step " + std::to_string(latest_step_) +
                ") and saved none since, so that checkpoint's state may itself be bad: try another label, or start "
                "again"
      : latest_step_ >= 0
          ? "the last good state is the checkpoint \"latest\" (step " + std::to_string(latest_step_) + ")"
          : "no checkpoint was saved before it (the first comes at the end of epoch 1): start again";
  throw TrainingError("the " + what + " became " + number_text(value) + " at step " + std::to_string(step_) + " " +
                      hint + "; " + last_good);
}

// Every parameter group (they share train.lr) takes the rate of the step about to run, so AdamW's step, its
// decoupled weight decay and HORST's mirror factor all use the scheduled η. A constant schedule sets train.lr itself.
void Trainer::apply_scheduled_learning_rate() {
  const double rate = lr_schedule_.at(step_);
  for (auto& group : optimizer().param_groups()) group.options().set_lr(rate);
}

void Trainer::checkpoint(const std::vector<std::string>& labels) {
  if (labels.empty()) return;
  // Every rank's own part (random stream, partial interval sums), so that each resumes its own: a collective, run
  // before the store is asked (only rank 0 has one).
  if (!checkpoints_) {
    replicas_.gather_own_parts(meters_.named_sums(), step_, nullptr);
    return;
  }
  record::CheckpointData data = capture_training_state(module(), optimizer(), order_, step_, order_.epoch());
  replicas_.gather_own_parts(meters_.named_sums(), step_, &data);
  auto& progress = data.sections["progress"];
  progress["accumulated"] = train::to_blob(torch::scalar_tensor(accumulated_, torch::kInt64));
  for (const auto& meter : meters_.all()) progress[meter.name()] = train::to_blob(meter.sum());
  save_state(data);
  nlohmann::json extra = {{"experiment", config_.name},
                          {"optimizer", optimizer_name()},
                          {"lr", config_.train.lr},
                          {"weight_decay", config_.train.weight_decay},
                          {"best_metric", has_best_ ? nlohmann::json(best_metric_) : nlohmann::json()}};
  describe_checkpoint(extra);
  if (dist::Group* group = replicas_.group()) {
    extra["data_parallel"] = {{"world_size", group->size()}, {"backend", dist::word(group->backend())}};
  }
  data.extra_json = extra.dump();
  std::vector<std::string> dropped;
  for (const auto& label : labels) {
    if (label.rfind("step-", 0) == 0) dropped = note_kept_step(step_, bytes_of(data));
  }
  checkpoints_->save_checkpoints(labels, std::move(data), dropped);
  if (std::find(labels.begin(), labels.end(), record::checkpoint_label::kLatest) != labels.end()) latest_step_ = step_;
}

void Trainer::resume_from(const record::CheckpointData& data, const std::string& path, const std::string& label) {
  const CheckpointReader checkpoint(data, path, label);
  restore_training_state(checkpoint, module(), optimizer(), order_);
  restore_interval_sums(checkpoint);
  restore_state(checkpoint);
  replicas_.restore_own_part(checkpoint, meters_.named_sums(), config_.train.seed);
  restore_progress(checkpoint);
  latest_step_ = label == record::checkpoint_label::kLatest ? step_ : -1;
  resumed_step_ = step_;
  has_best_ = false;
  const auto extra = nlohmann::json::parse(data.extra_json, nullptr, false);
  if (extra.is_object() && extra.contains("best_metric") && extra["best_metric"].is_number()) {
    best_metric_ = extra["best_metric"].get<double>();
    has_best_ = std::isfinite(best_metric_);
  }
}

void Trainer::continue_as_branch(const config::ExperimentConfig& parent) {
  optim::apply_optimizer_settings(optimizer(), config_);
  continue_branch(parent);
}

// The engine's meters from the "progress" section (absent: a checkpoint saved between intervals' sums).
// Every one is checked before any is copied in.
void Trainer::restore_interval_sums(const CheckpointReader& checkpoint) {
  torch::NoGradGuard no_grad;
  std::vector<std::pair<torch::Tensor, torch::Tensor>> restored;
  for (auto& meter : meters_.all()) {
    if (const record::TensorBlob* found = checkpoint.find("progress", meter.name())) {
      restored.emplace_back(
          checkpoint.shaped_like(*found, "progress", meter.name(), meter.sum(), CheckpointReader::Values::Finite),
          meter.sum());
    }
  }
  for (auto& [value, into] : restored) into.copy_(value);
}

// The loop's own progress: the steps summed since the last metric row, and the step, which must be where the
// restored data order stands.
void Trainer::restore_progress(const CheckpointReader& checkpoint) {
  accumulated_ = 0;
  if (const record::TensorBlob* found = checkpoint.find("progress", "accumulated")) {
    const torch::Tensor accumulated = train::to_tensor(*found);
    if (accumulated.numel() != 1 || accumulated.scalar_type() != torch::kInt64) {
      checkpoint.mismatch("progress/accumulated", "must be one int64 value");
    }
    accumulated_ = accumulated.item<int64_t>();
    // The steps summed since the last metric row: never more than one metric interval.
    if (accumulated_ < 0 || accumulated_ > config_.train.metric_interval) {
      checkpoint.corrupt("progress/accumulated", "is " + std::to_string(accumulated_) + ", outside 0.." +
                                                     std::to_string(config_.train.metric_interval) +
                                                     " (the metric interval)");
    }
  }
  // A checkpoint whose step was damaged would resume at a wrong step and truncate (or skip) every metric row after
  // it. Refused, naming the object and both numbers.
  const int64_t step = checkpoint.checkpoint().step;
  const int64_t batch = config_.train.batch_size;
  const int64_t expected = order_.epoch() * order_.batches_per_epoch(batch) + (order_.position() + batch - 1) / batch;
  if (step != expected || step < 0 || step > total_steps()) {
    checkpoint.corrupt("step", "is " + std::to_string(step) + ", but its data order stands at epoch " +
                                   std::to_string(order_.epoch()) + ", sample " + std::to_string(order_.position()) +
                                   ", which is step " + std::to_string(expected) + " of " +
                                   std::to_string(total_steps()));
  }
  step_ = step;
}

size_t Trainer::bytes_of(const record::CheckpointData& data) {
  size_t bytes = 0;
  for (const auto& [section, tensors] : data.sections) {
    for (const auto& [name, blob] : tensors) bytes += blob.bytes.size();
  }
  return bytes;
}

std::vector<std::string> Trainer::note_kept_step(int64_t step, size_t bytes) {
  if (std::find(kept_steps_.begin(), kept_steps_.end(), step) == kept_steps_.end()) kept_steps_.push_back(step);
  std::sort(kept_steps_.begin(), kept_steps_.end());
  const auto& t = config_.train;
  const double budget = static_cast<double>(t.keep_megabytes) * 1024.0 * 1024.0;
  std::vector<std::string> dropped;
  // The newest is always kept: it is the one being saved.
  while (kept_steps_.size() > 1 && (static_cast<int64_t>(kept_steps_.size()) > t.keep_count ||
                                    static_cast<double>(kept_steps_.size()) * static_cast<double>(bytes) > budget)) {
    dropped.push_back(record::checkpoint_label::at_step(kept_steps_.front()));
    kept_steps_.erase(kept_steps_.begin());
  }
  return dropped;
}

int64_t Trainer::keep_state_now() {
  if (replicas_.group()) throw Error("a data-parallel run cannot keep its state on request (its ranks step together)");
  if (!checkpoints_) throw Error("this run has no run file to keep its state in");
  checkpoint({record::checkpoint_label::at_step(step_)});
  return step_;
}

session::TrainingResult Trainer::run() {
  // A keep_state request still waiting when the run ends, however it ends, is told so.
  struct RefuseLeftRequests {
    session::TrainingControl* control;
    ~RefuseLeftRequests() {
      if (control) control->refuse_keep_requests("the run ended before its state was kept");
    }
  } refuse_left{control_};
  module().train();
  const int64_t batches_per_epoch = order_.batches_per_epoch(config_.train.batch_size);
  const auto started = std::chrono::steady_clock::now();
  const double held_before = held_seconds();
  const int64_t first_step = step_;
  session::TrainingResult result;
  result.metric = metric_name();
  Interval interval;
  interval.held_at_start = held_before;

  check_replicas("before step " + std::to_string(step_ + 1));
  if (step_ == 0) histograms_now();
  // A checkpoint taken at the end of an epoch resumes at the start of the next one.
  int64_t epoch = order_.position() >= order_.dataset_size() ? order_.epoch() + 1 : order_.epoch();
  for (; epoch < config_.train.epochs; ++epoch) {
    if (!train_epoch(epoch, batches_per_epoch, interval)) {
      result.stopped = true;
      break;
    }
    finish_epoch(epoch, result);
  }
  if (result.stopped) {
    checkpoint({record::checkpoint_label::kLatest});  // a cancelled run loses nothing: resume continues mid-epoch
    sinks_.flush();
  }
  result.steps = step_;
  // Running time only: the time a pause held the run is not training time.
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count() -
                   (held_seconds() - held_before);
  result.steps_per_second = result.seconds > 0 ? static_cast<double>(step_ - first_step) / result.seconds : 0.0;
  result.extra = summary();
  return result;
}

// The batches of one epoch from where the data order stands; false when the control stopped the run.
bool Trainer::train_epoch(int64_t epoch, int64_t batches_per_epoch, Interval& interval) {
  const auto& t = config_.train;
  const int64_t first_batch = order_.epoch() == epoch ? (order_.position() + t.batch_size - 1) / t.batch_size : 0;
  for (int64_t b = first_batch; b < batches_per_epoch; ++b) {
    const bool go_on = !control_ || control_->proceed([this] { return keep_state_now(); });
    if (!replicas_.agree_to_proceed(go_on, step_ + 1)) return false;
    before_batch(epoch);
    const std::vector<int64_t> batch = order_.next_batch(t.batch_size);
    apply_scheduled_learning_rate();
    train_step(replicas_.shard_of(batch), epoch);
    ++step_;
    ++accumulated_;
    interval.samples += static_cast<int64_t>(batch.size());
    if (step_ % t.metric_interval == 0 || b + 1 == batches_per_epoch) {
      if (replicas_.group()) {  // the interval's sums over every rank's part of the batches
        std::vector<torch::Tensor> sums;
        for (auto& meter : meters_.all()) sums.push_back(meter.sum());
        sum_over_ranks(sums, "the interval's training sums");
      }
      report_interval(accumulated_, epoch);  // reads the device: the interval's time includes its queued work
      for (auto& meter : meters_.all()) meter.reset();
      const double elapsed =
          record::wall_clock_seconds() - interval.started - (held_seconds() - interval.held_at_start);
      scalar(metric::kLearningRate, lr_schedule_.at(step_ - 1));  // the rate of the step just taken
      scalar(metric::kEpoch,
             static_cast<double>(epoch) + static_cast<double>(b + 1) / static_cast<double>(batches_per_epoch));
      scalar(metric::kThroughput, elapsed > 0 ? static_cast<double>(interval.samples) / elapsed : 0.0);
      accumulated_ = 0;
      interval = Interval{};
      interval.held_at_start = held_seconds();
    }
    if (t.histogram_interval > 0 && step_ % t.histogram_interval == 0) histograms_now();
    const int64_t periodic = periodic_interval();
    if (periodic > 0 && step_ % periodic == 0) periodic_evaluation();
    // A state kept to branch from (train.keep_interval); at the epoch's last batch it is kept with the epoch's own.
    if (t.keep_interval > 0 && step_ % t.keep_interval == 0 && b + 1 < batches_per_epoch) {
      checkpoint({record::checkpoint_label::at_step(step_)});
    }
  }
  return true;
}

// Evaluation, histograms, the best model and the epoch's checkpoints.
void Trainer::finish_epoch(int64_t epoch, session::TrainingResult& result) {
  end_epoch(epoch);
  const EpochTest test = evaluate_epoch();
  scalar(metric::kTestLoss, test.loss);
  scalar(record::test_series(metric_name()), test.metric);
  // A non-finite evaluation stops the run as a non-finite loss does (a GPT at lr 10 without clipping finished
  // with a test perplexity of inf as if all were well). Recorded first, so the file shows the value; this epoch
  // saves no checkpoint.
  const std::string hint = "(try a smaller lr, or a grad_clip)";
  require_finite(test.loss, "test loss", hint);
  require_finite(test.metric, "test " + metric_name(), hint);
  // Histograms at every epoch end too, unless this step just had them.
  const int64_t every = config_.train.histogram_interval;
  if (every == 0 || step_ % every != 0) histograms_now();
  // The periodic evaluation at the run's last step too (before the checkpoint, so the final "latest" holds the
  // weights it saw). Not at every epoch end: on a short run those would cost more than the interval's.
  const int64_t periodic = periodic_interval();
  if (periodic > 0 && step_ % periodic != 0 && epoch + 1 == config_.train.epochs) periodic_evaluation();
  result.evaluated = true;
  result.test_metric = test.metric;
  result.test_loss = test.loss;
  result.epochs_completed = epoch + 1;
  const bool better = higher_is_better() ? test.metric > best_metric_ : test.metric < best_metric_;
  std::vector<std::string> labels{record::checkpoint_label::kLatest};
  // A kept step that falls on the epoch's end is this same state (after the epoch's dual step): one shared copy.
  const int64_t keep = config_.train.keep_interval;
  if (keep > 0 && step_ % keep == 0) labels.push_back(record::checkpoint_label::at_step(step_));
  if (best_is_comparable() && (!has_best_ || better)) {
    best_metric_ = test.metric;
    has_best_ = true;
    labels.insert(labels.begin(), record::checkpoint_label::kBest);
  }
  check_replicas("after epoch " + std::to_string(epoch + 1));
  checkpoint(labels);
  sinks_.flush();
}

// Histograms are only recorded: in a data-parallel run only rank 0 (which records) computes them.
void Trainer::histograms_now() {
  if (replicas_.rank() == 0) emit_histograms();
}

}  // namespace descentlab::train
