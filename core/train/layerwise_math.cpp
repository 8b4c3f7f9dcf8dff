#include "core/train/layerwise_math.h"

#include <torch/torch.h>

namespace descentlab::train {

torch::Tensor constraint_slack(const torch::Tensor& layer_losses, const torch::Tensor& alpha, bool stop_gradient) {
  const int64_t layers = layer_losses.size(0) - 1;
  torch::Tensor previous = layer_losses.slice(0, 0, layers);
  if (stop_gradient) previous = previous.detach();
  return layer_losses.slice(0, 1, layers + 1) - (1.0 - alpha) * previous;
}

torch::Tensor lagrangian(const torch::Tensor& layer_losses, const torch::Tensor& slack, const torch::Tensor& lambda) {
  return layer_losses[-1] + (lambda.detach() * slack).sum();
}

void dual_step(torch::Tensor& lambda, const torch::Tensor& slack, const torch::Tensor& resilient_slack,
               double dual_lr) {
  torch::NoGradGuard no_grad;
  torch::Tensor ascent = slack.detach();
  if (resilient_slack.defined()) ascent = ascent - resilient_slack;
  lambda.add_(ascent, dual_lr).clamp_min_(0.0);
}

void resilient_step(torch::Tensor& resilient_slack, const torch::Tensor& lambda, double cost, double lr) {
  torch::NoGradGuard no_grad;
  resilient_slack.sub_(lr * (cost * resilient_slack - lambda)).clamp_min_(0.0);
}

double scheduled_alpha(config::AlphaSchedule schedule, double alpha, double alpha_final, int64_t epoch,
                       int64_t epochs) {
  if (schedule != config::AlphaSchedule::linear || epochs <= 1) return alpha;
  const double progress = static_cast<double>(epoch) / static_cast<double>(epochs - 1);
  return alpha + (alpha_final - alpha) * progress;
}

torch::Tensor descending_frequency(const torch::Tensor& per_sample_layer_losses) {
  const int64_t layers = per_sample_layer_losses.size(0) - 1;
  return per_sample_layer_losses.slice(0, 1, layers + 1)
      .le(per_sample_layer_losses.slice(0, 0, layers))
      .to(torch::kFloat64)
      .mean(1);
}

torch::Tensor descending_layers(const torch::Tensor& per_sample_layer_losses) {
  const int64_t layers = per_sample_layer_losses.size(0) - 1;
  return per_sample_layer_losses.slice(0, 1, layers + 1)
      .le(per_sample_layer_losses.slice(0, 0, layers))
      .sum(0)
      .to(torch::kInt64);
}

}  // namespace descentlab::train
