#pragma once
// Unstructured magnitude pruning (SCIENCE.md §2): masks that keep the largest |w|, either global across all selected
// tensors or per tensor ("layerwise"), with an exact number of pruned weights (ties broken by index, never by a
// threshold that could prune more or fewer). Used by AC/DC's compressed phases and by one-shot pruning.

#include <torch/nn/module.h>

#include <string>
#include <vector>

namespace descentlab::optim {

// Which parameters can be pruned: dim >= min_dim, and no name starting with an excluded prefix (embeddings and the
// readout are excluded by the models' presets through this list).
struct PruneSelection {
  int64_t min_dim = 2;
  std::vector<std::string> excluded_prefixes;
};

struct PrunableTensor {
  std::string name;
  torch::Tensor parameter;  // shares storage with the model's parameter
};

std::vector<PrunableTensor> select_prunable(const torch::nn::Module& model, const PruneSelection& selection);

enum class MaskScope { global, per_tensor };
MaskScope parse_mask_scope(const std::string& text);  // "global" | "per_layer"; throws std::invalid_argument
std::string to_string(MaskScope scope);

// One boolean mask per selected tensor, same order and shapes; true = kept.
struct MaskSet {
  std::vector<torch::Tensor> keep;
  int64_t pruned = 0;  // exactly the requested count
  int64_t total = 0;

  bool empty() const { return keep.empty(); }
  double sparsity() const { return total ? static_cast<double>(pruned) / static_cast<double>(total) : 0.0; }
};

// Prunes round(sparsity * n) weights of smallest magnitude, where n counts the weights of all tensors (global) or
// of each tensor (per_tensor). sparsity in [0, 1]; throws std::invalid_argument otherwise.
MaskSet magnitude_masks(const std::vector<PrunableTensor>& tensors, double sparsity, MaskScope scope);

// Sets the pruned weights to zero (in place, without autograd).
void apply_masks(const std::vector<PrunableTensor>& tensors, const MaskSet& masks);

// Weights that are exactly zero among the selected tensors, and their share.
struct SparsityCount {
  int64_t zeros = 0;
  int64_t total = 0;
  double share() const { return total ? static_cast<double>(zeros) / static_cast<double>(total) : 0.0; }
};
SparsityCount count_zeros(const std::vector<PrunableTensor>& tensors);

// Mask churn: the number of positions where two mask sets differ (Hamming distance). Same tensors required.
int64_t mask_hamming_distance(const MaskSet& before, const MaskSet& after);

// Sign flips between two snapshots of the same tensors: positions where both are non-zero and the signs differ.
int64_t count_sign_flips(const std::vector<torch::Tensor>& before, const std::vector<torch::Tensor>& after);
// The same among the weights kept by both masks: AC/DC's "sign flips", the kept weights whose sign changed between
// two compressions. Weights pruned at either one are left out: a pruned weight regrows from exactly zero in the
// dense phase and takes a sign at random, which drowned every optimizer's count alike (about 50,000 per
// compression for AdamW and HORST on the masks-settle tour's ViT).
int64_t count_sign_flips(const std::vector<torch::Tensor>& before, const std::vector<torch::Tensor>& after,
                         const MaskSet& kept_before, const MaskSet& kept_after);

// Copies of the selected tensors (for sign-flip comparisons).
std::vector<torch::Tensor> snapshot(const std::vector<PrunableTensor>& tensors);

}  // namespace descentlab::optim
