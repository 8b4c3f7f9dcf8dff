#pragma once
// The one epoch loop both engines run. It owns what every training run has: the data order, pause / stop
// (TrainingControl), the sinks, interval metrics (lr, epoch, throughput) and their timing, the NaN guard,
// evaluation at every epoch end, weight histograms, the checkpoints "latest" (every epoch, and when stopped) and
// "best" (by the task's own direction), and resume. An engine (LayerwiseTrainer, SparseTrainer) derives from
// Trainer and supplies only its hooks: one training step, the reading of its interval sums, its evaluation, and
// the saving and restoring of its own state. On CPU a run stopped at any batch and resumed continues bitwise
// identically to one that never stopped.

#include <torch/types.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/config/experiment_config.h"
#include "core/data/data_order.h"
#include "core/record/checkpoint.h"
#include "core/record/events.h"
#include "core/session/control.h"
#include "core/session/training_result.h"
#include "core/train/checkpoint_reader.h"
#include "core/train/lr_schedule.h"
#include "core/train/meters.h"
#include "core/train/replicas.h"
#include "core/util/error.h"

namespace torch::nn {
class Module;
}
namespace descentlab::dist {
class Group;
}
namespace torch::optim {
class Optimizer;
}

namespace descentlab::train {

class TrainingError : public Error {
 public:
  using Error::Error;
};

// An engine's evaluation on the test (or validation) split at an epoch end.
struct EpochTest {
  double metric = 0.0;  // accuracy, RMSE or perplexity
  double loss = 0.0;
};

class Trainer {
 public:
  virtual ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  void add_sink(record::MetricSink* sink) { sinks_.add(sink); }
  void set_control(session::TrainingControl* control) { control_ = control; }
  double held_seconds() const { return control_ ? control_->held_seconds() : 0.0; }
  void set_checkpoint_store(record::CheckpointStore* store) { checkpoints_ = store; }
  // Data-parallel training (core/dist, docs/scale-out.md): this process is one of group->size() replicas. Each
  // global batch of train.batch_size samples (one global data order) is split by rank; gradients, the layerwise
  // slack, the interval sums and the evaluations are summed over ranks, so every replica takes the same step and
  // reports the same numbers. Every rank runs every collective in the same order; only rank 0 has sinks and a
  // checkpoint store. Before run() (and before resume_from()); nullptr: one process.
  void set_data_parallel(dist::Group* group);

  // Restores the whole training state (training_state.h, the loop's progress, then the engine's own) from a
  // checkpoint read from `path` (named in errors).
  void resume_from(const record::CheckpointData& checkpoint, const std::string& path, const std::string& label);
  // After resume_from() of a branch (issue 55): takes up what the branch's configuration changed from `parent`'s
  // that the restored state holds with the parent's values (the optimizer's weight decay and mirror options; the
  // engine's own, continue_branch).
  void continue_as_branch(const config::ExperimentConfig& parent);
  // Keeps the state as it is now as the checkpoint "step-<step>" (TrainingControl::keep_state: a branch of a live
  // run); returns the step. Between batches only (the control calls it there).
  int64_t keep_state_now();
  // The steps whose states the run file already keeps ("step-N": a resumed run's), counted against train.keep_count
  // and keep_megabytes. Before run().
  void set_kept_steps(std::vector<int64_t> steps) { kept_steps_ = std::move(steps); }
  // Trains until the configured epochs are done or the control stops the run.
  session::TrainingResult run();

  int64_t total_steps() const;
  int64_t step() const { return step_; }
  // train.lr_schedule and train.warmup over this run's steps: the rate of step s is learning_rate_schedule().at(s).
  const LrSchedule& learning_rate_schedule() const { return lr_schedule_; }
  const config::ExperimentConfig& config() const { return config_; }
  // "accuracy", "rmse" or "perplexity", and which way is better.
  virtual std::string metric_name() const = 0;
  // From the metric vocabulary's direction of test_<metric> (core/record/metrics.h), the one place that says it.
  virtual bool higher_is_better() const;

 protected:
  // `samples`: the training samples the data order walks through; `window`: how much of them one shuffle mixes (a
  // data file read chunk by chunk; the default shuffles them all).
  Trainer(config::ExperimentConfig config, torch::Device device, int64_t samples, data::ShuffleWindow window = {});

  // ---- the hooks an engine supplies
  virtual torch::nn::Module& module() = 0;
  virtual torch::optim::Optimizer& optimizer() = 0;
  // The word of config.optimizer.name (the engines build it with optim::make_optimizer).
  virtual std::string optimizer_name() const { return config::word(config_.optimizer.name); }
  // Before each batch of `epoch` (the step about to run is step()).
  virtual void before_batch(int64_t epoch) { (void)epoch; }
  // One training step on the samples `indices` of `epoch`: forward, backward, optimizer step, and the step's
  // metrics added to the engine's meters on the device (no host read).
  virtual void train_step(const std::vector<int64_t>& indices, int64_t epoch) = 0;
  // At a metric interval: reads the meters over `steps` steps (the one host read), checks them with
  // require_finite and emits the engine's series (report_meters: every meter it reports). The loop then clears
  // the meters.
  virtual void report_interval(int64_t steps, int64_t epoch) = 0;
  // After the last batch of an epoch, before its evaluation (the layerwise dual step on held-out samples).
  virtual void end_epoch(int64_t epoch) { (void)epoch; }
  // Evaluates on the test split and emits the engine's own test series (the loop emits test_loss and
  // test_<metric>).
  virtual EpochTest evaluate_epoch() = 0;
  // Whether the model now may become "best" (AC/DC: only while compressed).
  virtual bool best_is_comparable() const { return true; }
  // The engine's periodic evaluation (the sparse trainer's live sparsity frontier): after every
  // periodic_interval() steps (after that step's histograms), and at the run's last step before its checkpoints,
  // once per step. It must leave the model and every training state as they were. 0: none.
  virtual int64_t periodic_interval() const { return 0; }
  virtual void periodic_evaluation() {}
  // Weight histograms (and what an engine adds to them) at the current step.
  virtual void emit_histograms();
  // The engine's own checkpoint sections and `extra` fields, and restoring them.
  virtual void save_state(record::CheckpointData& checkpoint) const = 0;
  virtual void restore_state(const CheckpointReader& checkpoint) = 0;
  virtual void describe_checkpoint(nlohmann::json& extra) const { (void)extra; }
  // A branch's settings over its restored state (continue_as_branch): the engine's part.
  virtual void continue_branch(const config::ExperimentConfig& parent) { (void)parent; }
  // The engine's fields of the run's summary (TrainingResult::extra).
  virtual nlohmann::json summary() const = 0;

  // ---- what the loop gives an engine
  void scalar(const std::string& name, double value) { sinks_.scalar(name, step_, value); }
  void vector(const std::string& name, const std::vector<double>& values) { sinks_.vector(name, step_, values); }
  void histograms(const std::vector<record::HistogramSnapshot>& snapshots) { sinks_.histograms(snapshots); }
  // Stops the run with a TrainingError ("the <what> became nan at step N <hint>; the last good state is the
  // checkpoint \"latest\"") when `value` is not finite; everything emitted so far is flushed first.
  void require_finite(double value, const std::string& what, const std::string& hint);
  data::DataOrder& order() { return order_; }
  const data::DataOrder& order() const { return order_; }
  const std::vector<double>& histogram_edges() const { return histogram_edges_; }

  // ---- interval metrics (meters.h): declared once, in the engine's constructor; added to in train_step
  // A meter of `shape` (float64, on the device) named `name` in checkpoints, reported as the metric `reported`
  // (nullptr: read by the engine itself, Meter::mean) by report_meters.
  Meter& add_meter(const std::string& name, const std::vector<int64_t>& shape, const char* reported = nullptr);
  // meter += this rank's weighted share of `value` (a step's metric), in float64, on the device.
  void add(Meter& meter, const torch::Tensor& value) { meter.sum() += weighted(value.detach().to(torch::kFloat64)); }
  // Emits every reported meter's mean over `steps`, in the order declared (called from report_interval).
  void report_meters(int64_t steps);

  // ---- data parallel (set_data_parallel); each is a no-op or the identity in one process
  dist::Group* data_parallel() const { return replicas_.group(); }
  // This rank's share of the global batch in the step in progress (1 in one process): its per-sample means are
  // weighted by it before they are summed over ranks, so sums are exact for an uneven last batch too.
  double shard_weight() const { return replicas_.shard_weight(); }
  torch::Tensor weighted(const torch::Tensor& value) const;
  // After backward, before clipping and the optimizer step: every gradient weighted by shard_weight() and summed over
  // ranks (every replica then holds the gradient of the global batch's mean loss), together with `sums` (already
  // weighted) in the same messages. Returns `sums` summed.
  std::vector<torch::Tensor> synchronize_gradients(std::vector<torch::Tensor> sums = {});
  // Sums `tensors` over ranks in place (interval sums, evaluation sums). `what` names them in errors.
  void sum_over_ranks(std::vector<torch::Tensor> tensors, const std::string& what);
  // The test samples [first, end) of `total` this rank evaluates (all of them in one process); the engine sums its
  // evaluation over ranks (sum_over_ranks) before dividing by `total`.
  std::pair<int64_t, int64_t> evaluation_range(int64_t total) const;
  // Stops the run when the replicas' weights differ (a checksum compared across ranks); `when` says where.
  void check_replicas(const std::string& when);

  config::ExperimentConfig config_;
  torch::Device device_;

 private:
  struct Interval;
  bool train_epoch(int64_t epoch, int64_t batches_per_epoch, Interval& interval);
  void finish_epoch(int64_t epoch, session::TrainingResult& result);
  void checkpoint(const std::vector<std::string>& labels);
  void apply_scheduled_learning_rate();

  void histograms_now();
  void restore_interval_sums(const CheckpointReader& checkpoint);
  void restore_progress(const CheckpointReader& checkpoint);

  data::DataOrder order_;
  std::vector<double> histogram_edges_;
  Replicas replicas_;
  record::SinkList sinks_;
  session::TrainingControl* control_ = nullptr;
  record::CheckpointStore* checkpoints_ = nullptr;
  LrSchedule lr_schedule_;
  int64_t step_ = 0;
  int64_t accumulated_ = 0;  // steps in the interval sums since the last metric read (checkpointed)
  double best_metric_ = 0.0;
  bool has_best_ = false;
  int64_t latest_step_ = -1;   // the step of the last "latest" checkpoint saved or resumed from; -1: none yet
  int64_t resumed_step_ = -1;  // the step this run resumed at; -1: it started from scratch
  // The kept steps' states ("step-N"), oldest first: each one kept registers here, and the oldest go past the limits
  // (each counted at the newest's size: a run's checkpoints keep one size).
  std::vector<int64_t> kept_steps_;
  std::vector<std::string> note_kept_step(int64_t step, size_t bytes);
  static size_t bytes_of(const record::CheckpointData& data);
  Meters meters_;
};

// "auto" -> CUDA when available, else CPU; "cuda" without CUDA is a clear error.
torch::Device resolve_device(const std::string& name);
torch::Device resolve_device(config::Device device);

}  // namespace descentlab::train
