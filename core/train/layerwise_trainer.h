#pragma once
// Trains an unrolled transformer by ERM (f_L) or by the primal-dual method of SCIENCE.md §1, emitting events to
// metric sinks and checkpoints to a run file. Honours pause / resume / stop between batches; on CPU a resumed run
// continues bitwise identically (model, optimizer, generator, data order and dual variables are checkpointed).

#include <torch/types.h>

#include <memory>
#include <string>
#include <vector>

#include "core/config/experiment_config.h"
#include "core/store/run_file.h"
#include "core/train/control.h"
#include "core/train/layerwise_task.h"
#include "core/train/metric_sink.h"

namespace descentlab::store {
class RunWriter;
}

namespace descentlab::train {

class TrainingError : public Error {
 public:
  using Error::Error;
};

struct Evaluation {
  std::vector<double> layer_loss;            // mean test loss per layer, f_0 .. f_L
  std::vector<double> descending_frequency;  // per layer 1..L
  double metric = 0.0;                       // accuracy or RMSE of the last layer
  double loss = 0.0;                         // f_L
};

struct TrainingResult {
  int64_t steps = 0;
  int64_t epochs_completed = 0;
  bool stopped = false;  // stopped early by the control (the state is checkpointed as "latest")
  double seconds = 0.0;
  double steps_per_second = 0.0;
  Evaluation test;
  std::vector<double> lambda;
};

class LayerwiseTrainer {
 public:
  LayerwiseTrainer(config::ExperimentConfig config, LayerwiseTask& task, torch::Device device);
  ~LayerwiseTrainer();

  void add_sink(MetricSink* sink) { sinks_.add(sink); }
  void set_control(TrainingControl* control) { control_ = control; }
  // Checkpoints go here: "latest" after every epoch and when stopped, "best" by the test metric.
  void set_run_writer(store::RunWriter* writer) { writer_ = writer; }
  // Restores the whole training state (see training_state.h) and the dual variables from a checkpoint.
  void resume_from(const store::CheckpointData& checkpoint, const std::string& path, const std::string& label);

  TrainingResult run();
  Evaluation evaluate();

  int64_t total_steps() const;
  int64_t step() const { return step_; }

 private:
  struct State;
  void emit_scalar(const std::string& name, double value);
  void emit_vector(const std::string& name, const std::vector<double>& values);
  void checkpoint(const std::vector<std::string>& labels);
  void dual_step_on_held_out();

  config::ExperimentConfig config_;
  LayerwiseTask& task_;
  torch::Device device_;
  std::unique_ptr<State> state_;
  SinkList sinks_;
  TrainingControl* control_ = nullptr;
  store::RunWriter* writer_ = nullptr;
  int64_t step_ = 0;
  double best_metric_ = 0.0;
  bool has_best_ = false;
};

// "auto" -> CUDA when available, else CPU; "cuda" without CUDA is a clear error.
torch::Device resolve_device(const std::string& name);

}  // namespace descentlab::train
