#include "core/optim/pruning.h"

#include <torch/torch.h>

#include <cmath>
#include <stdexcept>

namespace descentlab::optim {

std::vector<PrunableTensor> select_prunable(const torch::nn::Module& model, const PruneSelection& selection) {
  std::vector<PrunableTensor> selected;
  for (const auto& item : model.named_parameters(true)) {
    if (item.value().dim() < selection.min_dim) continue;
    bool excluded = false;
    for (const auto& prefix : selection.excluded_prefixes) {
      if (item.key().compare(0, prefix.size(), prefix) == 0) excluded = true;
    }
    if (!excluded) selected.push_back({item.key(), item.value()});
  }
  return selected;
}

MaskScope parse_mask_scope(const std::string& text) {
  if (text == "global") return MaskScope::global;
  if (text == "per_layer") return MaskScope::per_tensor;
  throw std::invalid_argument("mask scope \"" + text + "\": expected \"global\" or \"per_layer\"");
}

std::string to_string(MaskScope scope) {
  return scope == MaskScope::global ? "global" : "per_layer";
}

namespace {

int64_t pruned_count(double sparsity, int64_t total) {
  return std::min<int64_t>(total, std::llround(sparsity * static_cast<double>(total)));
}

// A keep-mask for `magnitudes` (1-D) with exactly `count` smallest entries pruned.
torch::Tensor keep_largest(const torch::Tensor& magnitudes, int64_t count) {
  torch::Tensor keep = torch::ones_like(magnitudes, torch::kBool);
  if (count <= 0) return keep;
  // A stable sort makes ties deterministic (lower index pruned first) on every device.
  const torch::Tensor order = std::get<1>(magnitudes.sort(/*stable=*/true, /*dim=*/0, /*descending=*/false));
  keep.index_fill_(0, order.slice(0, 0, count), false);
  return keep;
}

}  // namespace

MaskSet magnitude_masks(const std::vector<PrunableTensor>& tensors, double sparsity, MaskScope scope) {
  if (!(sparsity >= 0.0 && sparsity <= 1.0)) {
    throw std::invalid_argument("sparsity " + std::to_string(sparsity) + " is outside [0, 1]");
  }
  torch::NoGradGuard no_grad;
  MaskSet masks;
  if (tensors.empty()) return masks;
  if (scope == MaskScope::per_tensor) {
    for (const auto& tensor : tensors) {
      const torch::Tensor flat = tensor.parameter.detach().abs().flatten();
      const int64_t count = pruned_count(sparsity, flat.numel());
      masks.keep.push_back(keep_largest(flat, count).view_as(tensor.parameter));
      masks.pruned += count;
      masks.total += flat.numel();
    }
    return masks;
  }
  std::vector<torch::Tensor> flats;
  for (const auto& tensor : tensors) flats.push_back(tensor.parameter.detach().abs().flatten().to(torch::kFloat32));
  const torch::Tensor all = torch::cat(flats);
  masks.total = all.numel();
  masks.pruned = pruned_count(sparsity, masks.total);
  const torch::Tensor keep = keep_largest(all, masks.pruned);
  int64_t offset = 0;
  for (const auto& tensor : tensors) {
    const int64_t size = tensor.parameter.numel();
    masks.keep.push_back(keep.slice(0, offset, offset + size).view_as(tensor.parameter).clone());
    offset += size;
  }
  return masks;
}

void apply_masks(const std::vector<PrunableTensor>& tensors, const MaskSet& masks) {
  if (masks.keep.size() != tensors.size()) {
    throw std::invalid_argument("apply_masks: " + std::to_string(masks.keep.size()) + " masks for " +
                                std::to_string(tensors.size()) + " tensors");
  }
  torch::NoGradGuard no_grad;
  for (size_t i = 0; i < tensors.size(); ++i) {
    torch::Tensor parameter = tensors[i].parameter;
    parameter.masked_fill_(masks.keep[i].logical_not(), 0.0);
  }
}

SparsityCount count_zeros(const std::vector<PrunableTensor>& tensors) {
  torch::NoGradGuard no_grad;
  SparsityCount count;
  for (const auto& tensor : tensors) {
    count.total += tensor.parameter.numel();
    count.zeros += tensor.parameter.numel() - tensor.parameter.count_nonzero().item<int64_t>();
  }
  return count;
}

int64_t mask_hamming_distance(const MaskSet& before, const MaskSet& after) {
  if (before.keep.size() != after.keep.size()) {
    throw std::invalid_argument("mask_hamming_distance: mask sets of different tensors");
  }
  int64_t distance = 0;
  for (size_t i = 0; i < before.keep.size(); ++i) {
    distance += before.keep[i].ne(after.keep[i]).sum().item<int64_t>();
  }
  return distance;
}

int64_t count_sign_flips(const std::vector<torch::Tensor>& before, const std::vector<torch::Tensor>& after) {
  if (before.size() != after.size()) throw std::invalid_argument("count_sign_flips: snapshots of different tensors");
  torch::NoGradGuard no_grad;
  int64_t flips = 0;
  for (size_t i = 0; i < before.size(); ++i) {
    flips += (before[i].sign() * after[i].sign()).lt(0).sum().item<int64_t>();
  }
  return flips;
}

int64_t count_sign_flips(const std::vector<torch::Tensor>& before, const std::vector<torch::Tensor>& after,
                         const MaskSet& kept_before, const MaskSet& kept_after) {
  if (before.size() != after.size() || kept_before.keep.size() != before.size() ||
      kept_after.keep.size() != before.size()) {
    throw std::invalid_argument("count_sign_flips: snapshots and masks of different tensors");
  }
  torch::NoGradGuard no_grad;
  int64_t flips = 0;
  for (size_t i = 0; i < before.size(); ++i) {
    const torch::Tensor kept_by_both = kept_before.keep[i].logical_and(kept_after.keep[i]);
    flips += (before[i].sign() * after[i].sign()).lt(0).logical_and(kept_by_both).sum().item<int64_t>();
  }
  return flips;
}

std::vector<torch::Tensor> snapshot(const std::vector<PrunableTensor>& tensors) {
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> copies;
  for (const auto& tensor : tensors) copies.push_back(tensor.parameter.detach().clone());
  return copies;
}

}  // namespace descentlab::optim
