#include "core/optim/factory.h"

#include <torch/torch.h>

#include "core/config/json_reader.h"
#include "core/optim/mirror_adamw.h"

namespace descentlab::optim {

namespace {

MirrorOptions mirror_of(const config::ExperimentConfig& config) {
  MirrorOptions mirror;
  mirror.alpha = config.optimizer.alpha;
  mirror.beta = config.optimizer.beta;
  mirror.exponent_clamp = config.optimizer.exponent_clamp;
  mirror.min_dim = config.optimizer.min_dim;
  return mirror;
}

}  // namespace

std::unique_ptr<torch::optim::Optimizer> make_optimizer(std::vector<torch::Tensor> parameters,
                                                        const config::ExperimentConfig& config) {
  const auto adamw = torch::optim::AdamWOptions(config.train.lr).weight_decay(config.train.weight_decay);
  const MirrorOptions mirror = mirror_of(config);
  switch (config.optimizer.name) {
    case config::OptimizerName::adamw: return std::make_unique<torch::optim::AdamW>(std::move(parameters), adamw);
    case config::OptimizerName::horst: return std::make_unique<Horst>(std::move(parameters), adamw, mirror);
    case config::OptimizerName::ham: return std::make_unique<Ham>(std::move(parameters), adamw, mirror);
  }
  throw config::ConfigError(config.name, "optimizer.name",
                            "unknown optimizer \"" + config::word(config.optimizer.name) + "\"");
}

void apply_optimizer_settings(torch::optim::Optimizer& optimizer, const config::ExperimentConfig& config) {
  auto& groups = optimizer.param_groups();
  for (size_t group = 0; group < groups.size(); ++group) {
    if (auto* adamw = dynamic_cast<torch::optim::AdamWOptions*>(&groups[group].options())) {
      adamw->weight_decay(config.train.weight_decay);
    }
    if (auto* mirrored = dynamic_cast<MirroredAdamW*>(&optimizer)) {
      mirrored->set_group_mirror_options(group, mirror_of(config));
    }
  }
}

}  // namespace descentlab::optim
