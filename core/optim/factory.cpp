#include "core/optim/factory.h"

#include <torch/torch.h>

#include "core/config/json_reader.h"
#include "core/optim/mirror_adamw.h"

namespace descentlab::optim {

std::unique_ptr<torch::optim::Optimizer> make_optimizer(std::vector<torch::Tensor> parameters,
                                                        const config::ExperimentConfig& config) {
  const auto adamw = torch::optim::AdamWOptions(config.train.lr).weight_decay(config.train.weight_decay);
  MirrorOptions mirror;
  mirror.alpha = config.optimizer.alpha;
  mirror.beta = config.optimizer.beta;
  mirror.exponent_clamp = config.optimizer.exponent_clamp;
  mirror.min_dim = config.optimizer.min_dim;
  switch (config.optimizer.name) {
    case config::OptimizerName::adamw: return std::make_unique<torch::optim::AdamW>(std::move(parameters), adamw);
    case config::OptimizerName::horst: return std::make_unique<Horst>(std::move(parameters), adamw, mirror);
    case config::OptimizerName::ham: return std::make_unique<Ham>(std::move(parameters), adamw, mirror);
  }
  throw config::ConfigError(config.name, "optimizer.name",
                            "unknown optimizer \"" + config::word(config.optimizer.name) + "\"");
}

}  // namespace descentlab::optim
