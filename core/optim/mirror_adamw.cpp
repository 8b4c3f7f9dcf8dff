#include "core/optim/mirror_adamw.h"

#include <torch/torch.h>

#include <cmath>
#include <sstream>
#include <stdexcept>

#include "core/optim/state_key.h"

namespace descentlab::optim {

void MirrorOptions::validate() const {
  auto fail = [](const std::string& what) { throw std::invalid_argument("mirror step option " + what); };
  if (!std::isfinite(alpha) || alpha < 0) fail("alpha must be finite and >= 0, got " + std::to_string(alpha));
  if (!std::isfinite(beta) || beta < 0) fail("beta must be finite and >= 0, got " + std::to_string(beta));
  if (!(exponent_clamp > 0) || !std::isfinite(exponent_clamp)) {
    fail("exponent_clamp must be finite and > 0, got " + std::to_string(exponent_clamp));
  }
  if (min_dim < 0) fail("min_dim must be >= 0, got " + std::to_string(min_dim));
}

MirrorOptions default_horst_options() {
  MirrorOptions options;
  options.alpha = 5.0;
  options.beta = 0.0;
  return options;
}

MirrorOptions default_ham_options() {
  MirrorOptions options;
  options.alpha = 200.0;
  options.beta = 1e-3;
  return options;
}

torch::Tensor mirror_factor(const torch::Tensor& theta, const torch::Tensor& direction, double lr,
                            const MirrorOptions& mirror) {
  torch::NoGradGuard no_grad;
  // -α sign(θ) ⊙ d - η β, then clamp and exp, all in place on one temporary.
  torch::Tensor exponent = theta.sign().mul_(direction).mul_(-mirror.alpha);
  if (mirror.beta != 0.0) exponent.sub_(lr * mirror.beta);
  return exponent.clamp_(-mirror.exponent_clamp, mirror.exponent_clamp).exp_();
}

MirroredAdamW::MirroredAdamW(std::vector<torch::optim::OptimizerParamGroup> param_groups,
                             torch::optim::AdamWOptions adamw, MirrorOptions mirror, Direction direction)
    : torch::optim::AdamW(std::move(param_groups), adamw), direction_(direction) {
  mirror.validate();
  group_mirror_.assign(param_groups_.size(), mirror);
}

const MirrorOptions& MirroredAdamW::group_mirror_options(size_t group) const {
  // Groups added later with add_param_group take the first group's options.
  return group < group_mirror_.size() ? group_mirror_[group] : group_mirror_.front();
}

void MirroredAdamW::set_group_mirror_options(size_t group, MirrorOptions mirror) {
  if (group >= param_groups_.size()) {
    throw std::out_of_range("mirror options for param group " + std::to_string(group) + ", but the optimizer has " +
                            std::to_string(param_groups_.size()));
  }
  mirror.validate();
  if (group_mirror_.size() < param_groups_.size()) group_mirror_.resize(param_groups_.size(), group_mirror_.front());
  group_mirror_[group] = mirror;
}

torch::Tensor MirroredAdamW::direction_for(const torch::Tensor& parameter,
                                           const torch::optim::AdamWOptions& options) const {
  if (direction_ == Direction::raw_gradient) return parameter.grad() * options.lr();
  const auto found = state_.find(state_key(state_, parameter));
  if (found == state_.end()) return {};
  const auto& state = static_cast<const torch::optim::AdamWParamState&>(*found->second);
  // s_k exactly as AdamW forms it from the moments it has just updated (adamw.cpp): step_size · m / denom.
  const double beta1 = std::get<0>(options.betas());
  const double beta2 = std::get<1>(options.betas());
  const double bias_correction1 = 1.0 - std::pow(beta1, static_cast<double>(state.step()));
  const double bias_correction2 = 1.0 - std::pow(beta2, static_cast<double>(state.step()));
  const torch::Tensor& second_moment = options.amsgrad() ? state.max_exp_avg_sq() : state.exp_avg_sq();
  torch::Tensor denom = (second_moment.sqrt() / std::sqrt(bias_correction2)).add_(options.eps());
  return (state.exp_avg() * (options.lr() / bias_correction1)).div_(denom);
}

torch::Tensor MirroredAdamW::step(LossClosure closure) {
  torch::Tensor loss = torch::optim::AdamW::step(std::move(closure));  // θ_{k+1/2}; moments and steps updated
  torch::NoGradGuard no_grad;
  for (size_t group_index = 0; group_index < param_groups_.size(); ++group_index) {
    auto& group = param_groups_[group_index];
    const auto& options = static_cast<const torch::optim::AdamWOptions&>(group.options());
    const MirrorOptions& mirror = group_mirror_options(group_index);
    // No shortcut for α = β = 0: the factor is then exactly exp(0) = 1, and the tests check that this path is
    // AdamW bit for bit.
    for (auto& parameter : group.params()) {
      if (!parameter.grad().defined() || parameter.dim() < mirror.min_dim) continue;
      const torch::Tensor direction = direction_for(parameter, options);
      if (!direction.defined()) continue;
      parameter.mul_(mirror_factor(parameter, direction, options.lr(), mirror));
    }
  }
  return loss;
}

namespace {
// Per group: alpha, beta, exponent_clamp, min_dim, in one float64 tensor [groups x 4].
constexpr const char* kMirrorArchiveKey = "descentlab_mirror_options";
}  // namespace

void MirroredAdamW::save(torch::serialize::OutputArchive& archive) const {
  torch::optim::AdamW::save(archive);
  torch::Tensor table = torch::empty({static_cast<int64_t>(param_groups_.size()), 4}, torch::kFloat64);
  for (size_t group = 0; group < param_groups_.size(); ++group) {
    const MirrorOptions& mirror = group_mirror_options(group);
    auto row = table[static_cast<int64_t>(group)];
    row[0] = mirror.alpha;
    row[1] = mirror.beta;
    row[2] = mirror.exponent_clamp;
    row[3] = static_cast<double>(mirror.min_dim);
  }
  archive.write(kMirrorArchiveKey, table, /*is_buffer=*/true);
}

void MirroredAdamW::load(torch::serialize::InputArchive& archive) {
  torch::optim::AdamW::load(archive);
  torch::Tensor table;
  // A plain AdamW archive has no mirror options: keep the ones this optimizer was built with.
  if (!archive.try_read(kMirrorArchiveKey, table, /*is_buffer=*/true)) return;
  if (table.dim() != 2 || table.size(1) != 4 || table.size(0) != static_cast<int64_t>(param_groups_.size())) {
    throw std::runtime_error("optimizer archive: " + std::string(kMirrorArchiveKey) + " has shape " +
                             c10::str(table.sizes()) + ", expected [" + std::to_string(param_groups_.size()) +
                             ", 4] for this optimizer's param groups");
  }
  table = table.to(torch::kFloat64).contiguous();
  const double* values = table.data_ptr<double>();
  group_mirror_.resize(param_groups_.size());
  for (size_t group = 0; group < param_groups_.size(); ++group) {
    MirrorOptions mirror;
    mirror.alpha = values[group * 4 + 0];
    mirror.beta = values[group * 4 + 1];
    mirror.exponent_clamp = values[group * 4 + 2];
    mirror.min_dim = static_cast<int64_t>(values[group * 4 + 3]);
    mirror.validate();
    group_mirror_[group] = mirror;
  }
}

std::string MirroredAdamW::describe_json() const {
  std::ostringstream out;
  out.precision(17);
  out << "{\"optimizer\": \"" << (direction_ == Direction::adamw_step ? "horst" : "ham") << "\", \"groups\": [";
  for (size_t group = 0; group < param_groups_.size(); ++group) {
    const MirrorOptions& mirror = group_mirror_options(group);
    const auto& options = static_cast<const torch::optim::AdamWOptions&>(param_groups_[group].options());
    out << (group ? ", " : "") << "{\"lr\": " << options.lr() << ", \"weight_decay\": " << options.weight_decay()
        << ", \"alpha\": " << mirror.alpha << ", \"beta\": " << mirror.beta
        << ", \"exponent_clamp\": " << mirror.exponent_clamp << ", \"min_dim\": " << mirror.min_dim << "}";
  }
  out << "]}";
  return out.str();
}

}  // namespace descentlab::optim
