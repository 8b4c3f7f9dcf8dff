#pragma once
// Trains a tiny ViT or GPT with AdamW, HAM or HORST (SCIENCE.md §2), dense or with AC/DC sparsity: its step, its
// AC/DC phases and masks, its interval metrics and evaluation; the epoch loop (trainer.h) does the rest, and a
// resumed run continues bitwise identically on CPU (AC/DC phase and masks are checkpointed too).
//
// Events (run-file names): per metric interval loss, lr, epoch, throughput, sparsity (exact-zero share of the
// prunable weights) and acdc_phase (0 dense, 1 compressed, 2 decompressed); at every compression mask_churn (the
// Hamming distance to the previous mask), sign_flips (weights kept at both this and the previous compression
// whose sign changed between them) and test_<metric>_before_compression / _after_compression (on the first
// sparsity.compression_samples test samples, 0: all); per epoch test_loss and test_accuracy or test_perplexity; weight
// histograms (global and per block) with near_zero_share (|w| < 1e-4, 1e-3, 1e-2) every train.histogram_interval steps
// when set, and at every epoch end; the live sparsity frontier every sparsity.frontier_interval steps and at the run's
// last step: frontier_sparsity (the levels), frontier_achieved, frontier_accuracy or frontier_perplexity and
// frontier_loss, one column per level, from one_shot_prune on a copy of the weights and the first
// sparsity.frontier_samples test samples.

#include <torch/types.h>

#include <memory>
#include <string>
#include <vector>

#include "core/config/experiment_config.h"
#include "core/optim/pruning.h"
#include "core/tasks/sparse_task.h"
#include "core/train/acdc_schedule.h"
#include "core/train/trainer.h"

namespace descentlab::train {

struct SparseEvaluation {
  double loss = 0.0;    // mean cross-entropy
  double metric = 0.0;  // accuracy or perplexity
};

class SparseTrainer : public Trainer {
 public:
  SparseTrainer(config::ExperimentConfig config, tasks::SparseTask& task, torch::Device device);
  ~SparseTrainer() override;

  // The metric and loss on the first `samples` test (or validation) samples; 0: all of them.
  SparseEvaluation evaluate(int64_t samples = 0);
  std::string metric_name() const override { return task_.metric_name(); }
  torch::optim::Optimizer& optimizer() override;  // optim::make_optimizer's: AdamW, HAM or HORST
  const std::vector<optim::PrunableTensor>& prunable() const;
  // The AC/DC schedule (absent for dense runs).
  const AcdcSchedule* schedule() const;
  AcdcPhase phase() const;

 private:
  struct State;
  torch::nn::Module& module() override;
  void before_batch(int64_t epoch) override;
  void train_step(const std::vector<int64_t>& indices, int64_t epoch) override;
  void report_interval(int64_t steps, int64_t epoch) override;
  EpochTest evaluate_epoch() override;
  bool best_is_comparable() const override;
  void emit_histograms() override;
  void save_state(record::CheckpointData& checkpoint) const override;
  void restore_state(const CheckpointReader& checkpoint) override;
  void continue_branch(const config::ExperimentConfig& parent) override;
  void describe_checkpoint(nlohmann::json& extra) const override;
  nlohmann::json summary() const override;
  int64_t periodic_interval() const override;
  void periodic_evaluation() override;
  void enter_phase(AcdcPhase phase);

  tasks::SparseTask& task_;
  std::unique_ptr<State> state_;
};

// One-shot layerwise (per tensor) magnitude pruning of the task's trained model at each sparsity, evaluated without
// retraining on the first `samples` test samples (0: all) in batches of `batch_size`; the model's weights are restored
// bit for bit afterwards. Returns the metric per sparsity.
struct OneShotRow {
  double sparsity = 0.0;
  double achieved = 0.0;  // exact-zero share of the prunable weights after pruning
  SparseEvaluation evaluation;
};
std::vector<OneShotRow> one_shot_prune(tasks::SparseTask& task, const std::vector<double>& sparsities,
                                       const optim::PruneSelection& selection, optim::MaskScope scope,
                                       int64_t batch_size, int64_t samples = 0);
// The same on tensors already selected (the trainer's prunable tensors); with a data-parallel `group` each rank
// evaluates its part of the samples.
std::vector<OneShotRow> one_shot_prune(tasks::SparseTask& task, const std::vector<double>& sparsities,
                                       const std::vector<optim::PrunableTensor>& prunable, optim::MaskScope scope,
                                       int64_t batch_size, int64_t samples = 0, dist::Group* group = nullptr);
// The batch size of every evaluation of a sparse run (the epoch's test, the frontier, `prune`): the same batching
// gives the same sums, so the frontier and `prune` agree bit for bit.
int64_t evaluation_batch_size(const config::ExperimentConfig& config);

}  // namespace descentlab::train
