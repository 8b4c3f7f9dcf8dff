#pragma once
// Turns the plain dataset structures of core/data into tensors. The only data header that needs LibTorch.

#include <torch/types.h>

#include "core/data/corpus.h"
#include "core/data/idx.h"
#include "core/data/reviews.h"
#include "core/data/sprites.h"

namespace descentlab::tasks {

struct ImageTensors {
  torch::Tensor images;  // float32 [N, 1, rows, cols], pixels scaled to [0, 1]
  torch::Tensor labels;  // int64 [N]
};
ImageTensors to_tensors(const data::ImageSet& set);

struct TokenTensors {
  torch::Tensor token_ids;  // int64 [N, max_length]
  torch::Tensor lengths;    // int64 [N]
  torch::Tensor labels;     // int64 [N]
};
TokenTensors to_tensors(const data::EncodedReviews& reviews);

// Character ids as an int64 [length] tensor.
torch::Tensor to_tensor(const std::vector<int32_t>& ids);

// `count` clips from `first_clip`: float32 [count, frames, height, width] in [0, 1].
torch::Tensor sprite_video_batch(const data::SpriteVideoOptions& options, uint64_t first_clip, int64_t count);

}  // namespace descentlab::tasks
