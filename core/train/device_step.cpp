#include "core/train/device_step.h"

#include <torch/torch.h>

namespace descentlab::train {

void clip_gradient_norm(const std::vector<torch::Tensor>& parameters, double max_norm) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> gradients;
  for (const auto& parameter : parameters) {
    if (parameter.grad().defined()) gradients.push_back(parameter.grad());
  }
  if (gradients.empty()) return;
  std::vector<torch::Tensor> norms;
  norms.reserve(gradients.size());
  for (const auto& gradient : gradients) norms.push_back(gradient.norm(2));
  const torch::Tensor total = norms.size() == 1 ? norms[0] : torch::stack(norms).norm(2);
  const torch::Tensor coefficient = torch::clamp_max(max_norm / (total + 1e-6), 1.0);
  for (auto& gradient : gradients) gradient.mul_(coefficient);
}

}  // namespace descentlab::train
