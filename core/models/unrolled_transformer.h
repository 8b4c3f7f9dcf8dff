#pragma once
// The unrolled transformer of paper 1 (SCIENCE.md §1): an input embedding Φ_0 followed by L pre-norm blocks
// Φ_l = block_l(Φ_{l-1}), and a readout R that maps any Φ_l to a prediction, so that the per-layer losses
// f_l = loss(R(Φ_l), y) of every layer come from one forward pass.
//
// Two inputs: token ids (text classification: R = LayerNorm -> mean over valid tokens or first token -> linear)
// and video clips (denoising: spatio-temporal patches are the tokens; R = LayerNorm -> linear back to the patch
// pixels -> the clip). The readout is shared across layers by default, or one per layer.

#include <torch/nn/module.h>
#include <torch/nn/modules/activation.h>
#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/embedding.h>
#include <torch/nn/modules/linear.h>
#include <torch/nn/modules/normalization.h>

#include <vector>

namespace descentlab::models {

struct TransformerOptions {
  int64_t layers = 4;
  int64_t width = 64;
  int64_t heads = 4;
  int64_t ff_width = 128;
  double dropout = 0.1;
  bool per_layer_readout = false;  // false: one readout shared by all layers
};

// Scaled dot-product attention softmax(q k^T / sqrt(d) + mask) v on [batch, heads, tokens, head_width] tensors,
// with dropout on the attention weights when training. `mask` is added to the scores (-inf where attention is not
// allowed), broadcast to [batch, heads, tokens, tokens], or undefined.
// attention_math is the formula as LibTorch 1.13's C++ MultiheadAttention computes it; scaled_dot_product picks
// LibTorch 2.x's fused kernel (at::scaled_dot_product_attention) where it exists and the formula elsewhere.
torch::Tensor attention_math(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                             const torch::Tensor& mask, double dropout, bool training);
torch::Tensor scaled_dot_product(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                 const torch::Tensor& mask, double dropout, bool training);
// True when scaled_dot_product uses the fused kernel (LibTorch >= 2.0).
bool fused_attention_available();

// Which attention the blocks run, process-wide: scaled_dot_product (the default), or LibTorch's own
// MultiheadAttention module as the models called it before LibTorch 2.x had the fused kernel. The same parameters
// and results either way (tests/test_attention.cpp); the switch exists so that bench/ can time both in one process.
enum class AttentionPath { scaled_dot_product, libtorch_module };
void set_attention_path(AttentionPath path);

class PreNormBlockImpl : public torch::nn::Module {
 public:
  explicit PreNormBlockImpl(const TransformerOptions& options);
  // x: [batch, tokens, width]; padding: [batch, tokens] bool, true where a token is padding (or undefined);
  // attention_mask: [tokens, tokens] float added to the attention scores (-inf where attention is not allowed,
  // e.g. causal), or undefined. (LibTorch 1.13's C++ attention adds the mask, so bool masks do not work there.)
  torch::Tensor forward(const torch::Tensor& x, const torch::Tensor& padding, const torch::Tensor& attention_mask = {});
  // The attention part alone (no norm, no residual): [batch, tokens, width]. The parameters are those of
  // torch::nn::MultiheadAttention (attn.in_proj_weight, attn.in_proj_bias, attn.out_proj.*), so checkpoints keep
  // their names; the arithmetic goes through scaled_dot_product.
  torch::Tensor self_attention(const torch::Tensor& x, const torch::Tensor& padding,
                               const torch::Tensor& attention_mask);
  // What LibTorch's own MultiheadAttention module computes for the same input: the reference the tests compare to.
  torch::Tensor reference_attention(const torch::Tensor& x, const torch::Tensor& padding,
                                    const torch::Tensor& attention_mask);

 private:
  torch::nn::LayerNorm attention_norm{nullptr}, feed_forward_norm{nullptr};
  torch::nn::MultiheadAttention attn{nullptr};
  torch::nn::Linear feed_forward_in{nullptr}, feed_forward_out{nullptr};
  torch::nn::Dropout dropout{nullptr};
  int64_t heads_ = 1;
  double attention_dropout_ = 0.0;
};
TORCH_MODULE(PreNormBlock);

// What the blocks see: tokens and which of them are padding.
struct EmbeddedInput {
  torch::Tensor phi0;     // [batch, tokens, width]
  torch::Tensor padding;  // [batch, tokens] bool, or undefined when nothing is padded
};

class UnrolledTransformerImpl : public torch::nn::Module {
 public:
  // Φ_0..Φ_L for an input; every state is [batch, tokens, width].
  std::vector<torch::Tensor> states(const torch::Tensor& input);
  // The readout of layer `layer` (0..L) applied to a state.
  virtual torch::Tensor readout(int64_t layer, const torch::Tensor& state, const torch::Tensor& input) = 0;
  // Φ_0 with the input's padding mask; the embedding dropout is applied here.
  virtual EmbeddedInput embed(const torch::Tensor& input) = 0;
  // Φ_0 for a given embedding (used by the perturbation sweeps, which add noise to token embeddings).
  std::vector<torch::Tensor> states_from(const EmbeddedInput& embedded);
  // Φ_layer alone, by running only the first `layer` blocks (a separate forward pass, for checks).
  torch::Tensor state_at(const torch::Tensor& input, int64_t layer);

  int64_t layers() const { return options_.layers; }
  const TransformerOptions& options() const { return options_; }

 protected:
  explicit UnrolledTransformerImpl(const TransformerOptions& options);
  TransformerOptions options_;
  torch::nn::ModuleList blocks{nullptr};
  torch::nn::Dropout embedding_dropout{nullptr};
};

// Text classification on token ids [batch, length] (0 = <pad>).
class TextTransformerImpl : public UnrolledTransformerImpl {
 public:
  TextTransformerImpl(const TransformerOptions& options, int64_t vocabulary, int64_t max_length, int64_t classes,
                      bool first_token_pooling);
  EmbeddedInput embed(const torch::Tensor& token_ids) override;
  torch::Tensor token_embeddings(const torch::Tensor& token_ids);  // before positions and dropout
  EmbeddedInput embed_tokens(const torch::Tensor& token_embeddings, const torch::Tensor& token_ids);
  torch::Tensor readout(int64_t layer, const torch::Tensor& state, const torch::Tensor& token_ids) override;  // logits

 private:
  torch::nn::Embedding tokens{nullptr}, positions{nullptr};
  torch::nn::ModuleList readouts{nullptr};  // LayerNorm + Linear, one or L + 1
  bool first_token_pooling_;
};

// Video denoising on clips [batch, frames, height, width] cut into patches of (pt, ph, pw).
class VideoTransformerImpl : public UnrolledTransformerImpl {
 public:
  VideoTransformerImpl(const TransformerOptions& options, int64_t frames, int64_t height, int64_t width,
                       std::vector<int64_t> patch);
  EmbeddedInput embed(const torch::Tensor& clips) override;
  torch::Tensor readout(int64_t layer, const torch::Tensor& state, const torch::Tensor& clips) override;  // clips

  torch::Tensor to_patches(const torch::Tensor& clips) const;      // [batch, tokens, patch pixels]
  torch::Tensor from_patches(const torch::Tensor& patches) const;  // back to [batch, frames, height, width]

 private:
  int64_t frames_, height_, width_;
  std::vector<int64_t> patch_;
  torch::nn::Linear patch_in{nullptr};
  torch::nn::Embedding positions{nullptr};
  torch::nn::ModuleList readouts{nullptr};
};

}  // namespace descentlab::models
