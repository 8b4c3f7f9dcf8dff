#include "core/tasks/dataset_tensors.h"

#include <torch/torch.h>

namespace descentlab::tasks {
namespace {

// Copies a vector into a new tensor that owns its memory.
template <typename T>
torch::Tensor copy_to_tensor(const std::vector<T>& values, torch::IntArrayRef shape, torch::ScalarType type) {
  return torch::from_blob(const_cast<T*>(values.data()), shape, type).clone();
}

}  // namespace

ImageTensors to_tensors(const data::ImageSet& set) {
  ImageTensors tensors;
  tensors.images =
      copy_to_tensor(set.pixels, {set.count, 1, set.rows, set.cols}, torch::kUInt8).to(torch::kFloat32).div_(255.0);
  tensors.labels = copy_to_tensor(set.labels, {set.count}, torch::kUInt8).to(torch::kInt64);
  return tensors;
}

TokenTensors to_tensors(const data::EncodedReviews& reviews) {
  return TokenTensors{copy_to_tensor(reviews.token_ids, {reviews.count, reviews.max_length}, torch::kInt64),
                      copy_to_tensor(reviews.lengths, {reviews.count}, torch::kInt64),
                      copy_to_tensor(reviews.labels, {reviews.count}, torch::kInt64)};
}

torch::Tensor to_tensor(const std::vector<int32_t>& ids) {
  return copy_to_tensor(ids, {static_cast<int64_t>(ids.size())}, torch::kInt32).to(torch::kInt64);
}

torch::Tensor sprite_video_batch(const data::SpriteVideoOptions& options, uint64_t first_clip, int64_t count) {
  const auto pixels = data::generate_sprite_videos(options, first_clip, count);
  return copy_to_tensor(pixels, {count, options.frames, options.height, options.width}, torch::kFloat32);
}

}  // namespace descentlab::tasks
