#pragma once
// Robustness sweeps (SCIENCE.md §1): evaluate a trained model on perturbed test inputs at strengths γ, over
// several seeds, recording the task metric and the per-layer losses (does descent survive the noise?).
//   text, on the token embeddings e (σ = std of the clean embeddings of the batch's real tokens):
//     gaussian  e + γσ·N(0, 1)      uniform  e + γσ·U(-√3, √3)  (both of standard deviation γσ)
//     discrete  each real token replaced, with probability min(1, γ/4), by a token drawn uniformly from the
//               vocabulary's words (ids 2..V-1: never <pad> or <unk>)
//   video: the input clip is x + (σ_train·γ)·N(0, 1)

#include <torch/types.h>

#include <functional>
#include <string>
#include <vector>

#include "core/record/events.h"
#include "core/record/noise.h"
#include "core/tasks/layerwise_task.h"
#include "core/util/error.h"

namespace descentlab::eval {

// The perturbations, exposed for tests. `generator` makes them reproducible.
torch::Tensor perturb_embeddings(const torch::Tensor& embeddings, const torch::Tensor& token_ids,
                                 const std::string& noise, double gamma, at::Generator& generator);
torch::Tensor substitute_tokens(const torch::Tensor& token_ids, double gamma, int64_t vocabulary,
                                at::Generator& generator);

// The seed of the noise of sweep seed number s (0, 1, 2, ...): a video batch starting at test sample `start` draws
// from sweep_noise_seed(s) + start, a text sweep's generator starts from it. The layer probe draws the same.
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
