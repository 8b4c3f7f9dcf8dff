#pragma once
// Everything a trainer needs to continue a run exactly where it stopped, as a run-file checkpoint:
//   model/<parameter or buffer name>   the weights, under LibTorch names (readable with h5py)
//   optimizer/torch_archive            the optimizer's own serialization (moments, step counts, options) as bytes:
//                                      any torch::optim::Optimizer that implements save/load resumes exactly
//   optimizer/<parameter>.exp_avg, .exp_avg_sq, .step   the same Adam/AdamW moments, readable with h5py (for
//                                      inspection; resuming uses the archive)
//   rng/cpu                            the default CPU generator (dropout, noise)
//   data/order                         [seed, epoch, position] of the DataOrder
// plus the step, the epoch and a JSON `extra` for what the caller adds (dual variables go in their own section).
// On CPU a run resumed from this state continues bitwise identically to one that never stopped.

#include <torch/nn/module.h>
#include <torch/optim/optimizer.h>

#include "core/data/data_order.h"
#include "core/record/checkpoint.h"
#include "core/train/checkpoint_reader.h"

namespace descentlab::train {

record::CheckpointData capture_training_state(const torch::nn::Module& model, const torch::optim::Optimizer& optimizer,
                                              const data::DataOrder& order, int64_t step, int64_t epoch);

// Restores model, optimizer, CPU generator and data order from `checkpoint`. Every part is checked (the model
// strictly, by load_module_state) before anything changes.
void restore_training_state(const CheckpointReader& checkpoint, torch::nn::Module& model,
                            torch::optim::Optimizer& optimizer, data::DataOrder& order);

}  // namespace descentlab::train
