#pragma once
// A batch of a layerwise task: what the model reads and what it is scored against.

#include <torch/types.h>

namespace descentlab::tasks {

struct Batch {
  torch::Tensor input;   // token ids [B, length] or noisy clips [B, T, H, W]
  torch::Tensor target;  // labels [B] or clean clips [B, T, H, W]
};

}  // namespace descentlab::tasks
