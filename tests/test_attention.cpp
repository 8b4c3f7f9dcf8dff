// The models' attention (core/models/unrolled_transformer.h) computes what LibTorch's MultiheadAttention computes:
// on LibTorch 2.x through the fused at::scaled_dot_product_attention, on 1.13 through the same formula written out.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <limits>

#include "core/models/unrolled_transformer.h"

namespace descentlab::models {
namespace {

constexpr double kTolerance = 2e-5;  // float32 kernels that sum in different orders

TransformerOptions small_block() {
  TransformerOptions options;
  options.width = 32;
  options.heads = 4;
  options.ff_width = 64;
  options.dropout = 0.1;
  return options;
}

TEST(Attention, FusedKernelMatchesTheFormulaWithAndWithoutAMask) {
  torch::manual_seed(1);
  const auto q = torch::randn({3, 4, 7, 8}), k = torch::randn({3, 4, 7, 8}), v = torch::randn({3, 4, 7, 8});
  const auto causal = torch::full({7, 7}, -std::numeric_limits<float>::infinity()).triu(1);
  for (const torch::Tensor& mask : {torch::Tensor(), causal.unsqueeze(0).unsqueeze(0)}) {
    const auto fused = scaled_dot_product(q, k, v, mask, 0.0, false);
    const auto formula = attention_math(q, k, v, mask, 0.0, false);
    ASSERT_EQ(fused.sizes(), formula.sizes());
    EXPECT_LT((fused - formula).abs().max().item<double>(), kTolerance);
  }
  // Causal: the first token sees only itself, so its output is its own value.
  const auto first = scaled_dot_product(q, k, v, causal.unsqueeze(0).unsqueeze(0), 0.0, false).select(2, 0);
  EXPECT_LT((first - v.select(2, 0)).abs().max().item<double>(), kTolerance);
  std::cout << "[ attention ] fused kernel in use: " << (fused_attention_available() ? "yes" : "no (LibTorch 1.x)")
            << "\n";
}

TEST(Attention, BlockAttentionEqualsLibTorchsMultiheadAttention) {
  torch::manual_seed(2);
  PreNormBlock block(small_block());
  block->eval();  // dropout off: the two must agree exactly up to rounding
  torch::NoGradGuard no_grad;
  const auto x = torch::randn({5, 9, 32});
  // No mask (ViT), a causal additive mask (GPT), padding at the end of some rows (text), and both.
  const auto causal = torch::full({9, 9}, -std::numeric_limits<float>::infinity()).triu(1);
  auto padding = torch::zeros({5, 9}, torch::kBool);
  padding.index_put_({1, torch::indexing::Slice(6, torch::indexing::None)}, true);
  padding.index_put_({3, torch::indexing::Slice(2, torch::indexing::None)}, true);
  const std::vector<std::pair<torch::Tensor, torch::Tensor>> cases{
      {torch::Tensor(), torch::Tensor()}, {torch::Tensor(), causal}, {padding, torch::Tensor()}, {padding, causal}};
  for (const auto& [pad, mask] : cases) {
    const auto ours = block->self_attention(x, pad, mask);
    const auto reference = block->reference_attention(x, pad, mask);
    ASSERT_EQ(ours.sizes(), reference.sizes());
    EXPECT_LT((ours - reference).abs().max().item<double>(), kTolerance)
        << "padding " << pad.defined() << ", mask " << mask.defined();
  }
}

TEST(Attention, GradientsMatchLibTorchsMultiheadAttention) {
  torch::manual_seed(3);
  PreNormBlock block(small_block());
  block->eval();
  const auto x = torch::randn({4, 6, 32});
  const auto causal = torch::full({6, 6}, -std::numeric_limits<float>::infinity()).triu(1);
  auto gradient_of = [&](bool ours) {
    block->zero_grad();
    const auto out = ours ? block->self_attention(x, {}, causal) : block->reference_attention(x, {}, causal);
    out.pow(2).sum().backward();
    std::vector<torch::Tensor> grads;
    for (const auto& parameter : block->parameters()) {
      if (parameter.grad().defined()) grads.push_back(parameter.grad().clone());
    }
    return grads;
  };
  const auto ours = gradient_of(true), reference = gradient_of(false);
  ASSERT_EQ(ours.size(), reference.size());
  ASSERT_GE(ours.size(), 4u);  // in_proj weight and bias, out_proj weight and bias
  for (size_t i = 0; i < ours.size(); ++i) {
    const double scale = std::max(1.0, reference[i].abs().max().item<double>());
    EXPECT_LT((ours[i] - reference[i]).abs().max().item<double>() / scale, 1e-4) << "parameter " << i;
  }
}

TEST(Attention, DropoutActsOnlyInTraining) {
  torch::manual_seed(4);
  const auto q = torch::randn({2, 2, 5, 4}), k = torch::randn({2, 2, 5, 4}), v = torch::randn({2, 2, 5, 4});
  const auto eval = scaled_dot_product(q, k, v, {}, 0.5, false);
  EXPECT_LT((eval - attention_math(q, k, v, {}, 0.0, false)).abs().max().item<double>(), kTolerance);
  const auto train = scaled_dot_product(q, k, v, {}, 0.5, true);
  EXPECT_GT((train - eval).abs().max().item<double>(), 1e-3);
}

}  // namespace
}  // namespace descentlab::models
