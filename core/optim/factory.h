#pragma once
// The optimizer an experiment names (optimizer.name), built over the parameters it trains: the one place that knows
// every optimizer, so an engine holds a torch::optim::Optimizer and never names one. Adding an optimizer: its class
// in core/optim/, its word in config::OptimizerName (core/config/choices.h), its options in config::OptimizerConfig
// if it has any, a case here, and a preset that names it (resources/presets/).

#include <torch/optim/optimizer.h>

#include <memory>
#include <vector>

#include "core/config/experiment_config.h"

namespace descentlab::optim {

// AdamW (LibTorch's), HAM or HORST (mirror_adamw.h), from config.optimizer and config.train (lr, weight_decay).
std::unique_ptr<torch::optim::Optimizer> make_optimizer(std::vector<torch::Tensor> parameters,
                                                        const config::ExperimentConfig& config);

// Sets what a branch may change of a built optimizer's options to `config`'s: the weight decay of every param group
// and, for HAM and HORST, their mirror options (a loaded archive brings the parent's). The learning rate is the
// trainer's schedule's, set every step.
void apply_optimizer_settings(torch::optim::Optimizer& optimizer, const config::ExperimentConfig& config);

}  // namespace descentlab::optim
