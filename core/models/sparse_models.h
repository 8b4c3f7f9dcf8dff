#pragma once
// The models of paper 2's experiments at lab scale (SCIENCE.md §2): a tiny ViT for MNIST / Fashion-MNIST and a
// tiny character-level GPT for Moby Dick. Both are stacks of the same pre-norm blocks as the unrolled transformer,
// and both expose their per-layer states.
//
// Parameter names (what pruning selections and weight histograms refer to):
//   ViT: patch_embedding.{weight,bias}, class_token, positions, blocks.<l>.*, norm.*, head.*
//   GPT: tokens.weight, positions.weight, blocks.<l>.*, norm.*, head.*

#include <torch/nn/module.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>

#include <string>
#include <vector>

#include "core/models/unrolled_transformer.h"

namespace descentlab::models {

// The parameters that are "embedding" or "readout" in each model (excluded from pruning by default).
const std::vector<std::string>& vit_embedding_and_readout_prefixes();
const std::vector<std::string>& gpt_embedding_and_readout_prefixes();

// Images [batch, 1, side, side] cut into non-overlapping patch x patch squares, a class token, learned positions,
// L blocks, LayerNorm, linear head on the class token.
class TinyVitImpl : public torch::nn::Module {
 public:
  TinyVitImpl(const TransformerOptions& options, int64_t image_side, int64_t patch, int64_t classes);
  torch::Tensor forward(const torch::Tensor& images);              // logits [batch, classes]
  std::vector<torch::Tensor> states(const torch::Tensor& images);  // Φ_0..Φ_L, [batch, tokens, width]
  torch::Tensor patches(const torch::Tensor& images) const;        // [batch, patches, patch*patch]

 private:
  TransformerOptions options_;
  int64_t image_side_, patch_;
  torch::nn::Linear patch_embedding{nullptr};
  torch::Tensor class_token, positions;
  torch::nn::ModuleList blocks{nullptr};
  torch::nn::Dropout dropout{nullptr};
  torch::nn::LayerNorm norm{nullptr};
  torch::nn::Linear head{nullptr};
};
TORCH_MODULE(TinyVit);

// Character ids [batch, context] -> next-character logits [batch, context, vocabulary], causal attention.
class TinyGptImpl : public torch::nn::Module {
 public:
  TinyGptImpl(const TransformerOptions& options, int64_t vocabulary, int64_t context);
  torch::Tensor forward(const torch::Tensor& ids);
  std::vector<torch::Tensor> states(const torch::Tensor& ids);
  int64_t context() const { return context_; }

 private:
  TransformerOptions options_;
  int64_t context_;
  torch::nn::Embedding tokens{nullptr}, positions{nullptr};
  torch::nn::ModuleList blocks{nullptr};
  torch::nn::Dropout dropout{nullptr};
  torch::nn::LayerNorm norm{nullptr};
  torch::nn::Linear head{nullptr};
  torch::Tensor causal_mask_;  // [context, context] float, -inf above the diagonal (a buffer: moves with the model)
};
TORCH_MODULE(TinyGpt);

}  // namespace descentlab::models
