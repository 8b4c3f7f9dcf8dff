#pragma once
// Trains an unrolled transformer by ERM (f_L) or by the primal-dual method of SCIENCE.md §1: its step, its
// interval metrics, its evaluation and its dual variables; the epoch loop (trainer.h) does the rest.

#include <torch/types.h>

#include <memory>
#include <string>
#include <vector>

#include "core/config/experiment_config.h"
#include "core/tasks/layerwise_task.h"
#include "core/train/trainer.h"

namespace descentlab::train {

struct Evaluation {
  std::vector<double> layer_loss;            // mean test loss per layer, f_0 .. f_L
  std::vector<double> descending_frequency;  // per layer 1..L
  std::vector<double> descent_counts;        // n_k: test samples descending at exactly k of the L layers, k = 0..L
  double metric = 0.0;                       // accuracy or RMSE of the last layer
  double loss = 0.0;                         // f_L
};

class LayerwiseTrainer : public Trainer {
 public:
  LayerwiseTrainer(config::ExperimentConfig config, tasks::LayerwiseTask& task, torch::Device device);
  ~LayerwiseTrainer() override;

  Evaluation evaluate();
  std::string metric_name() const override { return task_.metric_name(); }

 private:
  struct State;
  torch::nn::Module& module() override;
  torch::optim::Optimizer& optimizer() override;
  void train_step(const std::vector<int64_t>& indices, int64_t epoch) override;
  void report_interval(int64_t steps, int64_t epoch) override;
  void end_epoch(int64_t epoch) override;
  EpochTest evaluate_epoch() override;
  void save_state(record::CheckpointData& checkpoint) const override;
  void restore_state(const CheckpointReader& checkpoint) override;
  nlohmann::json summary() const override;
  double alpha_of(int64_t epoch) const;
  bool dual_active(int64_t epoch) const;

  tasks::LayerwiseTask& task_;
  std::unique_ptr<State> state_;
};

}  // namespace descentlab::train
