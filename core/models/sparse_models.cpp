#include "core/models/sparse_models.h"

#include <torch/torch.h>

#include <limits>

#include "core/util/error.h"

namespace descentlab::models {

const std::vector<std::string>& vit_embedding_and_readout_prefixes() {
  static const std::vector<std::string> prefixes = {"patch_embedding.", "class_token", "positions", "head."};
  return prefixes;
}

const std::vector<std::string>& gpt_embedding_and_readout_prefixes() {
  static const std::vector<std::string> prefixes = {"tokens.", "positions.", "head."};
  return prefixes;
}

namespace {

void check_options(const TransformerOptions& options, const std::string& model) {
  if (options.layers < 1 || options.width < 1 || options.heads < 1 || options.width % options.heads != 0) {
    throw Error(model + ": width (" + std::to_string(options.width) + ") must be a positive multiple of heads (" +
                std::to_string(options.heads) + ") and layers >= 1");
  }
}

torch::nn::ModuleList make_blocks(const TransformerOptions& options) {
  torch::nn::ModuleList blocks;
  for (int64_t l = 0; l < options.layers; ++l) blocks->push_back(PreNormBlock(options));
  return blocks;
}

}  // namespace

TinyVitImpl::TinyVitImpl(const TransformerOptions& options, int64_t image_side, int64_t patch, int64_t classes)
    : options_(options), image_side_(image_side), patch_(patch) {
  check_options(options, "tiny ViT");
  if (patch < 1 || image_side % patch != 0) {
    throw Error("tiny ViT: the patch size (" + std::to_string(patch) + ") must divide the image side (" +
                std::to_string(image_side) + ")");
  }
  const int64_t count = (image_side / patch) * (image_side / patch);
  patch_embedding = register_module("patch_embedding", torch::nn::Linear(patch * patch, options.width));
  class_token = register_parameter("class_token", torch::randn({1, 1, options.width}) * 0.02);
  positions = register_parameter("positions", torch::randn({1, count + 1, options.width}) * 0.02);
  blocks = register_module("blocks", make_blocks(options));
  dropout = register_module("dropout", torch::nn::Dropout(options.dropout));
  norm = register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({options.width})));
  head = register_module("head", torch::nn::Linear(options.width, classes));
}

torch::Tensor TinyVitImpl::patches(const torch::Tensor& images) const {
  // [B, 1, S, S] -> [B, S/p, p, S/p, p] -> [B, S/p, S/p, p, p] -> [B, (S/p)^2, p*p]
  const int64_t batch = images.size(0), cells = image_side_ / patch_;
  return images.reshape({batch, cells, patch_, cells, patch_})
      .permute({0, 1, 3, 2, 4})
      .reshape({batch, cells * cells, patch_ * patch_});
}

std::vector<torch::Tensor> TinyVitImpl::states(const torch::Tensor& images) {
  if (images.dim() != 4 || images.size(2) != image_side_ || images.size(3) != image_side_) {
    throw Error("tiny ViT: expected images [batch, 1, " + std::to_string(image_side_) + ", " +
                std::to_string(image_side_) + "], got " + c10::str(images.sizes()));
  }
  const torch::Tensor embedded = patch_embedding(patches(images));
  torch::Tensor x = torch::cat({class_token.expand({images.size(0), 1, options_.width}), embedded}, 1) + positions;
  std::vector<torch::Tensor> phi{dropout(x)};
  for (const auto& block : *blocks) phi.push_back(block->as<PreNormBlock>()->forward(phi.back(), {}));
  return phi;
}

torch::Tensor TinyVitImpl::forward(const torch::Tensor& images) {
  const torch::Tensor last = states(images).back();
  return head(norm(last.select(1, 0)));
}

TinyGptImpl::TinyGptImpl(const TransformerOptions& options, int64_t vocabulary, int64_t context)
    : options_(options), context_(context) {
  check_options(options, "tiny GPT");
  if (context < 1) throw Error("tiny GPT: context must be >= 1, got " + std::to_string(context));
  tokens = register_module("tokens", torch::nn::Embedding(vocabulary, options.width));
  positions = register_module("positions", torch::nn::Embedding(context, options.width));
  blocks = register_module("blocks", make_blocks(options));
  dropout = register_module("dropout", torch::nn::Dropout(options.dropout));
  norm = register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({options.width})));
  head = register_module("head", torch::nn::Linear(options.width, vocabulary));
  // An additive mask (-inf above the diagonal): LibTorch 1.13's C++ attention adds attn_mask to the scores, so a
  // bool mask would not mask at all there; a float mask means the same in every version.
  causal_mask_ =
      register_buffer("causal_mask", torch::full({context, context}, -std::numeric_limits<float>::infinity()).triu(1));
}

std::vector<torch::Tensor> TinyGptImpl::states(const torch::Tensor& ids) {
  const int64_t length = ids.size(1);
  if (ids.dim() != 2 || length > context_) {
    throw Error("tiny GPT: expected ids [batch, <= " + std::to_string(context_) + "], got " + c10::str(ids.sizes()));
  }
  const torch::Tensor where = torch::arange(length, ids.options());
  const torch::Tensor mask = causal_mask_.slice(0, 0, length).slice(1, 0, length);
  std::vector<torch::Tensor> phi{dropout(tokens(ids) + positions(where))};
  for (const auto& block : *blocks) phi.push_back(block->as<PreNormBlock>()->forward(phi.back(), {}, mask));
  return phi;
}

torch::Tensor TinyGptImpl::forward(const torch::Tensor& ids) {
  return head(norm(states(ids).back()));
}

}  // namespace descentlab::models
