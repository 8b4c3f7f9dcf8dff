#include "core/models/unrolled_transformer.h"

#include <torch/torch.h>
#include <torch/version.h>

#include <atomic>
#include <cmath>
#include <limits>

#include "core/util/error.h"

namespace descentlab::models {

torch::Tensor attention_math(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                             const torch::Tensor& mask, double dropout, bool training) {
  // As torch::nn::functional::multi_head_attention_forward (1.13): q scaled first, mask added, softmax, dropout.
  torch::Tensor scores = torch::matmul(q * (1.0 / std::sqrt(static_cast<double>(q.size(-1)))), k.transpose(-2, -1));
  if (mask.defined()) scores = scores + mask;
  torch::Tensor weights = torch::softmax(scores, -1);
  if (dropout > 0 && training) weights = torch::dropout(weights, dropout, true);
  return torch::matmul(weights, v);
}

bool fused_attention_available() { return TORCH_VERSION_MAJOR >= 2; }

namespace {
std::atomic<AttentionPath> attention_path{AttentionPath::scaled_dot_product};
}  // namespace

void set_attention_path(AttentionPath path) { attention_path.store(path); }

torch::Tensor scaled_dot_product(const torch::Tensor& q, const torch::Tensor& k, const torch::Tensor& v,
                                 const torch::Tensor& mask, double dropout, bool training) {
#if TORCH_VERSION_MAJOR >= 2
  const c10::optional<at::Tensor> additive = mask.defined() ? c10::optional<at::Tensor>(mask) : c10::optional<at::Tensor>();
  return at::scaled_dot_product_attention(q, k, v, additive, training ? dropout : 0.0, /*is_causal=*/false);
#else
  return attention_math(q, k, v, mask, dropout, training);
#endif
}

namespace {

// One additive mask [batch or 1, 1, tokens or 1, tokens] from a padding mask [batch, tokens] (true = padding) and
// an additive [tokens, tokens] mask; undefined when neither is given.
torch::Tensor combined_mask(const torch::Tensor& padding, const torch::Tensor& attention_mask,
                            const torch::TensorOptions& options) {
  torch::Tensor mask;
  if (attention_mask.defined()) mask = attention_mask.to(options).unsqueeze(0).unsqueeze(0);
  if (padding.defined()) {
    const torch::Tensor blocked = torch::zeros(padding.sizes(), options)
                                      .masked_fill(padding, -std::numeric_limits<float>::infinity())
                                      .unsqueeze(1)
                                      .unsqueeze(1);
    mask = mask.defined() ? mask + blocked : blocked;
  }
  return mask;
}

}  // namespace

PreNormBlockImpl::PreNormBlockImpl(const TransformerOptions& options)
    : heads_(options.heads), attention_dropout_(options.dropout) {
  attention_norm =
      register_module("attention_norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({options.width})));
  attn = register_module(
      "attn", torch::nn::MultiheadAttention(
                  torch::nn::MultiheadAttentionOptions(options.width, options.heads).dropout(options.dropout)));
  feed_forward_norm =
      register_module("feed_forward_norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({options.width})));
  feed_forward_in = register_module("feed_forward_in", torch::nn::Linear(options.width, options.ff_width));
  feed_forward_out = register_module("feed_forward_out", torch::nn::Linear(options.ff_width, options.width));
  dropout = register_module("dropout", torch::nn::Dropout(options.dropout));
}

torch::Tensor PreNormBlockImpl::forward(const torch::Tensor& x, const torch::Tensor& padding,
                                        const torch::Tensor& attention_mask) {
  const torch::Tensor normed = attention_norm(x);
  const torch::Tensor attended = attention_path.load(std::memory_order_relaxed) == AttentionPath::libtorch_module
                                     ? reference_attention(normed, padding, attention_mask)
                                     : self_attention(normed, padding, attention_mask);
  torch::Tensor out = x + dropout(attended);
  out = out + dropout(feed_forward_out(dropout(torch::gelu(feed_forward_in(feed_forward_norm(out))))));
  return out;
}

torch::Tensor PreNormBlockImpl::self_attention(const torch::Tensor& x, const torch::Tensor& padding,
                                               const torch::Tensor& attention_mask) {
  const int64_t batch = x.size(0), tokens = x.size(1), width = x.size(2), head_width = width / heads_;
  // [batch, tokens, 3 * width] -> three [batch, heads, tokens, head_width]
  const auto qkv = torch::nn::functional::linear(x, attn->in_proj_weight, attn->in_proj_bias)
                       .view({batch, tokens, 3, heads_, head_width})
                       .permute({2, 0, 3, 1, 4})
                       .unbind(0);
  const torch::Tensor mask = combined_mask(padding, attention_mask, x.options());
  const torch::Tensor attended = scaled_dot_product(qkv[0], qkv[1], qkv[2], mask, attention_dropout_, is_training());
  return attn->out_proj(attended.transpose(1, 2).reshape({batch, tokens, width}));
}

torch::Tensor PreNormBlockImpl::reference_attention(const torch::Tensor& x, const torch::Tensor& padding,
                                                    const torch::Tensor& attention_mask) {
  // LibTorch's MultiheadAttention takes [tokens, batch, width].
  const torch::Tensor t = x.transpose(0, 1);
  return std::get<0>(attn(t, t, t, padding, /*need_weights=*/false, attention_mask)).transpose(0, 1);
}

UnrolledTransformerImpl::UnrolledTransformerImpl(const TransformerOptions& options) : options_(options) {
  if (options.layers < 1 || options.width < 1 || options.heads < 1 || options.width % options.heads != 0) {
    throw Error("transformer: width (" + std::to_string(options.width) + ") must be a positive multiple of heads (" +
                std::to_string(options.heads) + ") and layers >= 1");
  }
  blocks = register_module("blocks", torch::nn::ModuleList());
  for (int64_t l = 0; l < options.layers; ++l) blocks->push_back(PreNormBlock(options));
  embedding_dropout = register_module("embedding_dropout", torch::nn::Dropout(options.dropout));
}

std::vector<torch::Tensor> UnrolledTransformerImpl::states(const torch::Tensor& input) {
  return states_from(embed(input));
}

std::vector<torch::Tensor> UnrolledTransformerImpl::states_from(const EmbeddedInput& embedded) {
  std::vector<torch::Tensor> phi{embedded.phi0};
  phi.reserve(static_cast<size_t>(options_.layers) + 1);
  for (const auto& block : *blocks) phi.push_back(block->as<PreNormBlock>()->forward(phi.back(), embedded.padding));
  return phi;
}

torch::Tensor UnrolledTransformerImpl::state_at(const torch::Tensor& input, int64_t layer) {
  const EmbeddedInput embedded = embed(input);
  torch::Tensor state = embedded.phi0;
  for (int64_t l = 0; l < layer; ++l)
    state = blocks[static_cast<size_t>(l)]->as<PreNormBlock>()->forward(state, embedded.padding);
  return state;
}

namespace {

torch::nn::Sequential make_readout(int64_t width, int64_t outputs) {
  return torch::nn::Sequential(torch::nn::LayerNorm(torch::nn::LayerNormOptions({width})),
                               torch::nn::Linear(width, outputs));
}

}  // namespace

TextTransformerImpl::TextTransformerImpl(const TransformerOptions& options, int64_t vocabulary, int64_t max_length,
                                         int64_t classes, bool first_token_pooling)
    : UnrolledTransformerImpl(options), first_token_pooling_(first_token_pooling) {
  tokens = register_module("tokens", torch::nn::Embedding(torch::nn::EmbeddingOptions(vocabulary, options.width)));
  positions = register_module("positions", torch::nn::Embedding(max_length, options.width));
  readouts = register_module("readouts", torch::nn::ModuleList());
  const int64_t count = options.per_layer_readout ? options.layers + 1 : 1;
  // Each readout is LayerNorm then Linear; Sequential names them readouts.<k>.0 and readouts.<k>.1.
  for (int64_t k = 0; k < count; ++k) readouts->push_back(make_readout(options.width, classes));
}

torch::Tensor TextTransformerImpl::token_embeddings(const torch::Tensor& token_ids) {
  return tokens(token_ids);
}

EmbeddedInput TextTransformerImpl::embed_tokens(const torch::Tensor& token_embeddings, const torch::Tensor& token_ids) {
  const int64_t length = token_ids.size(1);
  const torch::Tensor position_ids = torch::arange(length, token_ids.options());
  EmbeddedInput embedded;
  embedded.phi0 = embedding_dropout(token_embeddings + positions(position_ids).unsqueeze(0));
  embedded.padding = token_ids.eq(0);
  return embedded;
}

EmbeddedInput TextTransformerImpl::embed(const torch::Tensor& token_ids) {
  return embed_tokens(token_embeddings(token_ids), token_ids);
}

torch::Tensor TextTransformerImpl::readout(int64_t layer, const torch::Tensor& state, const torch::Tensor& token_ids) {
  const auto& head = readouts[options_.per_layer_readout ? layer : 0]->as<torch::nn::Sequential>();
  const torch::Tensor normed = head->ptr(0)->as<torch::nn::LayerNorm>()->forward(state);
  torch::Tensor pooled;
  if (first_token_pooling_) {
    pooled = normed.select(1, 0);
  } else {
    const torch::Tensor valid = token_ids.ne(0).unsqueeze(-1).to(normed.scalar_type());
    pooled = (normed * valid).sum(1) / valid.sum(1).clamp_min(1.0);
  }
  return head->ptr(1)->as<torch::nn::Linear>()->forward(pooled);
}

VideoTransformerImpl::VideoTransformerImpl(const TransformerOptions& options, int64_t frames, int64_t height,
                                           int64_t width, std::vector<int64_t> patch)
    : UnrolledTransformerImpl(options), frames_(frames), height_(height), width_(width), patch_(std::move(patch)) {
  if (patch_.size() != 3 || frames % patch_[0] != 0 || height % patch_[1] != 0 || width % patch_[2] != 0) {
    throw Error("video transformer: patch (frames, height, width) must divide the clip " + std::to_string(frames) +
                "x" + std::to_string(height) + "x" + std::to_string(width));
  }
  const int64_t patch_pixels = patch_[0] * patch_[1] * patch_[2];
  const int64_t tokens = (frames / patch_[0]) * (height / patch_[1]) * (width / patch_[2]);
  patch_in = register_module("patch_in", torch::nn::Linear(patch_pixels, options.width));
  positions = register_module("positions", torch::nn::Embedding(tokens, options.width));
  readouts = register_module("readouts", torch::nn::ModuleList());
  const int64_t count = options.per_layer_readout ? options.layers + 1 : 1;
  for (int64_t k = 0; k < count; ++k) readouts->push_back(make_readout(options.width, patch_pixels));
}

torch::Tensor VideoTransformerImpl::to_patches(const torch::Tensor& clips) const {
  const int64_t batch = clips.size(0);
  const int64_t nt = frames_ / patch_[0], nh = height_ / patch_[1], nw = width_ / patch_[2];
  return clips.reshape({batch, nt, patch_[0], nh, patch_[1], nw, patch_[2]})
      .permute({0, 1, 3, 5, 2, 4, 6})
      .reshape({batch, nt * nh * nw, patch_[0] * patch_[1] * patch_[2]});
}

torch::Tensor VideoTransformerImpl::from_patches(const torch::Tensor& patches) const {
  const int64_t batch = patches.size(0);
  const int64_t nt = frames_ / patch_[0], nh = height_ / patch_[1], nw = width_ / patch_[2];
  return patches.reshape({batch, nt, nh, nw, patch_[0], patch_[1], patch_[2]})
      .permute({0, 1, 4, 2, 5, 3, 6})
      .reshape({batch, frames_, height_, width_});
}

EmbeddedInput VideoTransformerImpl::embed(const torch::Tensor& clips) {
  const torch::Tensor patches = patch_in(to_patches(clips));
  const torch::Tensor position_ids =
      torch::arange(patches.size(1), torch::TensorOptions().dtype(torch::kInt64).device(clips.device()));
  return EmbeddedInput{embedding_dropout(patches + positions(position_ids).unsqueeze(0)), torch::Tensor()};
}

torch::Tensor VideoTransformerImpl::readout(int64_t layer, const torch::Tensor& state, const torch::Tensor&) {
  const auto& head = readouts[options_.per_layer_readout ? layer : 0]->as<torch::nn::Sequential>();
  return from_patches(head->forward(state));
}

}  // namespace descentlab::models
