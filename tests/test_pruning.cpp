// Magnitude masks (core/optim/pruning.h) and the AC/DC schedule (core/train/acdc_schedule.h).
#include <torch/torch.h>

#include <gtest/gtest.h>

#include "core/optim/pruning.h"
#include "core/train/acdc_schedule.h"

namespace {

using namespace descentlab::optim;
using descentlab::train::AcdcFractions;
using descentlab::train::AcdcPhase;
using descentlab::train::AcdcSchedule;

struct ThreeLayersImpl : torch::nn::Module {
  torch::nn::Embedding embedding{nullptr};
  torch::nn::Linear first{nullptr}, second{nullptr}, readout{nullptr};
  ThreeLayersImpl() {
    embedding = register_module("embedding", torch::nn::Embedding(50, 16));
    first = register_module("first", torch::nn::Linear(16, 33));
    second = register_module("second", torch::nn::Linear(33, 17));
    readout = register_module("readout", torch::nn::Linear(17, 4));
  }
};
TORCH_MODULE(ThreeLayers);

std::vector<PrunableTensor> hidden_layers(ThreeLayers& model) {
  PruneSelection selection;
  selection.excluded_prefixes = {"embedding", "readout"};
  return select_prunable(*model, selection);
}

TEST(Pruning, SelectionKeepsWeightMatricesAndHonoursExclusions) {
  ThreeLayers model;
  const auto selected = hidden_layers(model);
  ASSERT_EQ(selected.size(), 2u);
  EXPECT_EQ(selected[0].name, "first.weight");
  EXPECT_EQ(selected[1].name, "second.weight");
  EXPECT_EQ(select_prunable(*model, PruneSelection{}).size(), 4u);  // embedding and readout too, never biases
}

TEST(Pruning, GlobalAndPerLayerMasksReachTheExactSparsity) {
  torch::manual_seed(4);
  for (auto scope : {MaskScope::global, MaskScope::per_tensor}) {
    for (double sparsity : {0.0, 0.5, 0.7, 0.8, 0.9, 0.97, 1.0}) {
      ThreeLayers model;
      const auto tensors = hidden_layers(model);
      const MaskSet masks = magnitude_masks(tensors, sparsity, scope);
      apply_masks(tensors, masks);
      const int64_t total = 33 * 16 + 17 * 33;
      EXPECT_EQ(masks.total, total);
      if (scope == MaskScope::global) {
        EXPECT_EQ(masks.pruned, std::llround(sparsity * total)) << sparsity;
      } else {
        EXPECT_EQ(masks.pruned, std::llround(sparsity * 33 * 16) + std::llround(sparsity * 17 * 33)) << sparsity;
        // Per layer: each tensor reaches its own share.
        EXPECT_EQ(tensors[0].parameter.numel() - tensors[0].parameter.count_nonzero().item<int64_t>(),
                  std::llround(sparsity * 33 * 16));
      }
      EXPECT_EQ(count_zeros(tensors).zeros, masks.pruned) << "scope " << to_string(scope) << " at " << sparsity;
    }
  }
}

TEST(Pruning, TiesDoNotChangeTheCount) {
  // All weights equal: a threshold would prune all or nothing; the masks prune exactly the requested number.
  ThreeLayers model;
  {
    torch::NoGradGuard no_grad;
    model->first->weight.fill_(0.25);
    model->second->weight.fill_(-0.25);
  }
  const auto tensors = hidden_layers(model);
  const MaskSet masks = magnitude_masks(tensors, 0.3, MaskScope::global);
  apply_masks(tensors, masks);
  EXPECT_EQ(count_zeros(tensors).zeros, std::llround(0.3 * (33 * 16 + 17 * 33)));
}

TEST(Pruning, GlobalMasksPruneTheSmallestMagnitudesAcrossLayers) {
  ThreeLayers model;
  {
    torch::NoGradGuard no_grad;
    model->first->weight.fill_(0.01);   // small: pruned first
    model->second->weight.fill_(-3.0);  // large: kept
  }
  const auto tensors = hidden_layers(model);
  const MaskSet masks = magnitude_masks(tensors, double(33 * 16) / (33 * 16 + 17 * 33), MaskScope::global);
  EXPECT_FALSE(masks.keep[0].any().item<bool>());
  EXPECT_TRUE(masks.keep[1].all().item<bool>());
  EXPECT_THROW(magnitude_masks(tensors, 1.5, MaskScope::global), std::invalid_argument);
  EXPECT_THROW(parse_mask_scope("everywhere"), std::invalid_argument);
  EXPECT_EQ(parse_mask_scope("per_layer"), MaskScope::per_tensor);
}

TEST(Pruning, ChurnAndSignFlips) {
  ThreeLayers model;
  const auto tensors = hidden_layers(model);
  const MaskSet before = magnitude_masks(tensors, 0.5, MaskScope::global);
  EXPECT_EQ(mask_hamming_distance(before, before), 0);
  const auto snapshot_before = snapshot(tensors);
  {
    torch::NoGradGuard no_grad;
    tensors[0].parameter.neg_();  // every non-zero weight of the first layer flips sign
  }
  EXPECT_EQ(count_sign_flips(snapshot_before, snapshot(tensors)), tensors[0].parameter.count_nonzero().item<int64_t>());
  // Among the weights kept by both masks only: with the same mask before and after, the first layer's kept ones.
  EXPECT_EQ(count_sign_flips(snapshot_before, snapshot(tensors), before, before), before.keep[0].sum().item<int64_t>());
  {
    // A mask after that keeps none of the first layer: nothing kept by both, nothing counted.
    MaskSet none_kept = before;
    none_kept.keep[0] = torch::zeros_like(before.keep[0]);
    EXPECT_EQ(count_sign_flips(snapshot_before, snapshot(tensors), before, none_kept), 0);
    MaskSet wrong = before;
    wrong.keep.pop_back();
    EXPECT_THROW(count_sign_flips(snapshot_before, snapshot(tensors), before, wrong), std::invalid_argument);
  }
  // Swap which half is kept in the first layer: churn counts both the newly pruned and the newly kept.
  {
    torch::NoGradGuard no_grad;
    tensors[0].parameter.copy_(torch::where(before.keep[0], torch::full_like(tensors[0].parameter, 1e-6),
                                            torch::full_like(tensors[0].parameter, 10.0)));
  }
  const MaskSet after = magnitude_masks(tensors, 0.5, MaskScope::per_tensor);
  EXPECT_GT(mask_hamming_distance(before, after), 0);
}

TEST(AcdcSchedule, PhasesLandOnTheDocumentedBoundaries) {
  const AcdcSchedule schedule(1000);
  std::vector<std::pair<AcdcPhase, int64_t>> expected = {{AcdcPhase::dense, 0}, {AcdcPhase::compressed, 100}};
  for (int i = 1; i < 13; ++i) {
    expected.push_back({i % 2 == 0 ? AcdcPhase::compressed : AcdcPhase::decompressed, 100 + 50 * i});
  }
  expected.push_back({AcdcPhase::decompressed, 750});
  expected.push_back({AcdcPhase::compressed, 850});
  // [700, 750) compressed, then [750, 850) decompressed, then [850, 1000) compressed.
  const auto& spans = schedule.spans();
  ASSERT_EQ(spans.size(), expected.size());
  for (size_t i = 0; i < spans.size(); ++i) {
    EXPECT_EQ(spans[i].phase, expected[i].first) << "span " << i;
    EXPECT_EQ(spans[i].begin, expected[i].second) << "span " << i;
    EXPECT_EQ(spans[i].end, i + 1 < spans.size() ? expected[i + 1].second : 1000) << "span " << i;
  }
  EXPECT_EQ(schedule.phase_at(0), AcdcPhase::dense);
  EXPECT_EQ(schedule.phase_at(99), AcdcPhase::dense);
  EXPECT_EQ(schedule.phase_at(100), AcdcPhase::compressed);
  EXPECT_EQ(schedule.phase_at(149), AcdcPhase::compressed);
  EXPECT_EQ(schedule.phase_at(150), AcdcPhase::decompressed);
  EXPECT_EQ(schedule.phase_at(749), AcdcPhase::compressed);
  EXPECT_EQ(schedule.phase_at(800), AcdcPhase::decompressed);
  EXPECT_EQ(schedule.phase_at(999), AcdcPhase::compressed);
  EXPECT_TRUE(schedule.starts_phase(850));
  EXPECT_FALSE(schedule.starts_phase(851));
}

TEST(AcdcSchedule, EpochUnitsAndTinyRuns) {
  // 20 epochs: dense 0-1, C 2, D 3, ..., C 14, D 15-16, C 17-19.
  const AcdcSchedule epochs(20);
  EXPECT_EQ(epochs.phase_at(1), AcdcPhase::dense);
  EXPECT_EQ(epochs.phase_at(2), AcdcPhase::compressed);
  EXPECT_EQ(epochs.phase_at(3), AcdcPhase::decompressed);
  EXPECT_EQ(epochs.phase_at(14), AcdcPhase::compressed);
  EXPECT_EQ(epochs.phase_at(15), AcdcPhase::decompressed);
  EXPECT_EQ(epochs.phase_at(16), AcdcPhase::decompressed);
  EXPECT_EQ(epochs.phase_at(17), AcdcPhase::compressed);
  // 5 units: spans that round to nothing vanish, the run still ends compressed and the spans tile [0, 5).
  const AcdcSchedule tiny(5);
  int64_t cursor = 0;
  for (const auto& span : tiny.spans()) {
    EXPECT_EQ(span.begin, cursor);
    EXPECT_GT(span.end, span.begin);
    cursor = span.end;
  }
  EXPECT_EQ(cursor, 5);
  EXPECT_EQ(tiny.phase_at(4), AcdcPhase::compressed);
  EXPECT_THROW(AcdcSchedule(0), std::invalid_argument);
  AcdcFractions bad;
  bad.decompressed_until = 0.5;
  EXPECT_THROW(AcdcSchedule(100, bad), std::invalid_argument);
}

}  // namespace
