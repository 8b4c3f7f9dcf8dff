#pragma once
// The primal-dual pieces of layerwise descent (SCIENCE.md §1), as pure tensor functions.
//   layer losses f = [f_0, ..., f_L]; constraints f_l <= (1 - α_l) f_{l-1}, l = 1..L
//   slack g_l = f_l - (1 - α_l) f_{l-1};  Lagrangian = f_L + Σ_l λ_l g_l (λ held fixed)
//   dual step λ_l <- max(0, λ_l + η_λ (g_l - u_l));  resilient step u_l <- max(0, u_l - η_u (a u_l - λ_l))

#include <torch/types.h>

#include "core/config/choices.h"

namespace descentlab::train {

// f: [L + 1] layer losses (with autograd); alpha: [L]. With stop_gradient the previous layer's loss is a constant
// inside g_l, so a constraint cannot be met by making the earlier layer worse.
torch::Tensor constraint_slack(const torch::Tensor& layer_losses, const torch::Tensor& alpha, bool stop_gradient);

// f_L + Σ λ_l g_l with λ detached.
torch::Tensor lagrangian(const torch::Tensor& layer_losses, const torch::Tensor& slack, const torch::Tensor& lambda);

// In place and without autograd; `slack` is detached inside. `resilient_slack` may be undefined (no relaxation).
void dual_step(torch::Tensor& lambda, const torch::Tensor& slack, const torch::Tensor& resilient_slack, double dual_lr);
void resilient_step(torch::Tensor& resilient_slack, const torch::Tensor& lambda, double cost, double lr);

// α for an epoch: constant, or linear from `alpha` (first epoch) to `alpha_final` (last epoch).
double scheduled_alpha(config::AlphaSchedule schedule, double alpha, double alpha_final, int64_t epoch, int64_t epochs);

// Per-sample layer losses [L + 1, B] -> share of samples with loss_l <= loss_{l-1}, for l = 1..L ([L]).
torch::Tensor descending_frequency(const torch::Tensor& per_sample_layer_losses);
// Per-sample layer losses [L + 1, B] -> for each sample, at how many layers l = 1..L its loss_l <= loss_{l-1}
// ([B], int64): the descent certificate's counts (core/record/descent_certificate.h).
torch::Tensor descending_layers(const torch::Tensor& per_sample_layer_losses);

}  // namespace descentlab::train
