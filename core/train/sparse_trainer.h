#pragma once
// Trains a tiny ViT or GPT with AdamW, HAM or HORST (SCIENCE.md §2), dense or with AC/DC sparsity, emitting events
// to metric sinks and checkpoints to a run file. Honours pause / resume / stop between batches; on CPU a resumed
// run continues bitwise identically (model, optimizer, generator, data order, AC/DC phase and masks are saved).
//
// Events (run-file names): per metric interval loss, lr, epoch, throughput, sparsity (exact-zero share of the
// prunable weights) and acdc_phase (0 dense, 1 compressed, 2 decompressed); at every compression mask_churn (the
// Hamming distance to the previous mask) and sign_flips (prunable weights whose sign changed since the previous
// compression); per epoch test_loss and test_accuracy or test_perplexity; weight histograms (global and per block)
// with near_zero_share (|w| < 1e-4, 1e-3, 1e-2) every train.histogram_interval steps when set, and at every epoch end.

#include <torch/types.h>

#include <memory>
#include <string>
#include <vector>

#include "core/config/experiment_config.h"
#include "core/optim/pruning.h"
#include "core/store/run_file.h"
#include "core/train/acdc_schedule.h"
#include "core/train/control.h"
#include "core/train/layerwise_trainer.h"
#include "core/train/metric_sink.h"
#include "core/train/sparse_task.h"

namespace descentlab::train {

// AdamW (LibTorch's), HAM or HORST from config.optimizer and config.train (lr, weight_decay).
std::unique_ptr<torch::optim::AdamW> make_optimizer(std::vector<torch::Tensor> parameters,
                                                    const config::ExperimentConfig& config);

struct SparseEvaluation {
  double loss = 0.0;    // mean cross-entropy
  double metric = 0.0;  // accuracy or perplexity
};

struct SparseTrainingResult {
  int64_t steps = 0;
  int64_t epochs_completed = 0;
  bool stopped = false;
  double seconds = 0.0;
  double steps_per_second = 0.0;
  SparseEvaluation test;
  double sparsity = 0.0;                // exact-zero share of the prunable weights at the end
  std::vector<double> near_zero_share;  // |w| < 1e-4, 1e-3, 1e-2 over all weight tensors
};

class SparseTrainer {
 public:
  SparseTrainer(config::ExperimentConfig config, SparseTask& task, torch::Device device);
  ~SparseTrainer();

  void add_sink(MetricSink* sink) { sinks_.add(sink); }
  void set_control(TrainingControl* control) { control_ = control; }
  void set_run_writer(store::RunWriter* writer) { writer_ = writer; }
  void resume_from(const store::CheckpointData& checkpoint, const std::string& path, const std::string& label);

  SparseTrainingResult run();
  SparseEvaluation evaluate();
  int64_t total_steps() const;
  int64_t step() const { return step_; }
  torch::optim::AdamW& optimizer();
  const std::vector<optim::PrunableTensor>& prunable() const;
  // The AC/DC schedule (absent for dense runs).
  const AcdcSchedule* schedule() const;
  AcdcPhase phase() const;

 private:
  struct State;
  void emit_scalar(const std::string& name, double value);
  void emit_vector(const std::string& name, const std::vector<double>& values);
  void emit_histograms();
  void enter_phase(AcdcPhase phase);
  void checkpoint(const std::vector<std::string>& labels);

  config::ExperimentConfig config_;
  SparseTask& task_;
  torch::Device device_;
  std::unique_ptr<State> state_;
  SinkList sinks_;
  TrainingControl* control_ = nullptr;
  store::RunWriter* writer_ = nullptr;
  int64_t step_ = 0;
  double best_metric_ = 0.0;
  bool has_best_ = false;
};

// One-shot layerwise (per tensor) magnitude pruning of the task's trained model at each sparsity, evaluated without
// retraining; the model's weights are restored afterwards. Returns the metric per sparsity.
struct OneShotRow {
  double sparsity = 0.0;
  double achieved = 0.0;  // exact-zero share of the prunable weights after pruning
  SparseEvaluation evaluation;
};
std::vector<OneShotRow> one_shot_prune(SparseTask& task, const std::vector<double>& sparsities,
                                       const optim::PruneSelection& selection, optim::MaskScope scope,
                                       int64_t batch_size);

}  // namespace descentlab::train
