#pragma once
// Robustness sweeps (SCIENCE.md §1): evaluate a trained model on perturbed test inputs at strengths γ, over
// several seeds, recording the task metric and the per-layer losses (does descent survive the noise?). What each
// kind of noise draws, and which task takes which, is core/tasks/perturbation.h: the sweep asks the task for each
// perturbed test batch (LayerwiseTask::perturbed_test_batch), as the layer probe (layer_probe.h) does.

#include <torch/types.h>

#include <functional>
#include <string>
#include <vector>

#include "core/record/events.h"
#include "core/record/noise.h"
#include "core/tasks/layerwise_task.h"
#include "core/util/error.h"

namespace descentlab::eval {

// The seed of the noise of sweep seed number s (0, 1, 2, ...): the seed of its tasks::NoiseStream (a video batch
// starting at test sample `start` draws from sweep_noise_seed(s) + start, a text sweep's running generator starts
// from it). The layer probe draws the same.
uint64_t sweep_noise_seed(int64_t seed);

// γ values from "start:stop:step" (inclusive of stop, within rounding) or "a,b,c".
std::vector<double> parse_gamma_grid(const std::string& text);

struct SweepOptions {
  std::string noise;  // a kind of core/record/noise.h that applies to the model
  std::vector<double> gamma;
  int64_t seeds = 3;
  int64_t limit = 0;  // test samples to use; 0 = all
  int64_t batch_size = 128;
  // Called before each (γ, seed) cell with its index and the number of cells, and once more with cells == done at
  // the end; returning false cancels the sweep (run_sweep then throws SweepCancelled).
  std::function<bool(size_t done, size_t cells)> on_cell;
};

// A sweep cancelled through SweepOptions::on_cell: nothing of it is kept.
class SweepCancelled : public Error {
 public:
  SweepCancelled() : Error("the sweep was cancelled") {}
};

record::SweepResult run_sweep(tasks::LayerwiseTask& task, const SweepOptions& options);

}  // namespace descentlab::eval
