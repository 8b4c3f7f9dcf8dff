#pragma once
// HORST and HAM (SCIENCE.md §2): AdamW followed by a multiplicative ("hyperbolic mirror") step on weight tensors,
//
//   θ <- θ · exp( clamp( -α · sign(θ) ⊙ d - η β, -c, c ) )
//
// applied after AdamW's own step (the mirror step comes second; the other order loses the L1 bias), where
//   HORST: d = s_k, the AdamW step itself (η · m̂ / (√v̂ + ε), bias-corrected, from the same moments AdamW just used);
//   HAM:   d = η ∇f, the raw gradient scaled by the learning rate (Jacobs & Burkholz, "Hyperbolic Aware Minimization").
// Only tensors with dim >= min_dim (2 by default: weight matrices, embeddings, convolution kernels) get the mirror
// step; biases and norm parameters are plain AdamW. sign(0) = 0 and the step is a product, so an exact zero stays
// exactly zero through the mirror step. With α = 0 and β = 0 the factor is exactly exp(0) = 1 and the optimizer is
// LibTorch's AdamW bit for bit: the AdamW part *is* torch::optim::AdamW (these classes derive from it), so its
// options, param groups, state and serialization are AdamW's, plus the mirror options below.
// Every operation works on whole tensors (no per-element C++ loops), on any device.

#include <torch/optim/adamw.h>

#include <string>
#include <vector>

namespace descentlab::optim {

struct MirrorOptions {
  double alpha = 0.0;           // strength of the sparsity (L1) pull
  double beta = 0.0;            // multiplicative decay per step, scaled by η
  double exponent_clamp = 5.0;  // |exponent| <= exponent_clamp, as in HAM
  int64_t min_dim = 2;          // tensors with fewer dimensions get plain AdamW

  void validate() const;  // throws std::invalid_argument naming the bad option
};

// The mirror rule's default options: HORST α = 5 (SCIENCE.md's best small-ViT value; sweep it per task), β = 0;
// HAM α = 200, β = 1e-3 (its paper's defaults).
MirrorOptions default_horst_options();
MirrorOptions default_ham_options();

class MirroredAdamW : public torch::optim::AdamW {
 public:
  enum class Direction { adamw_step, raw_gradient };

  // One MirrorOptions for every param group unless set_group_mirror_options changes a group.
  MirroredAdamW(std::vector<torch::optim::OptimizerParamGroup> param_groups, torch::optim::AdamWOptions adamw,
                MirrorOptions mirror, Direction direction);

  torch::Tensor step(LossClosure closure = nullptr) override;

  const MirrorOptions& group_mirror_options(size_t group) const;
  void set_group_mirror_options(size_t group, MirrorOptions mirror);
  Direction direction() const { return direction_; }

  // AdamW's archive plus the mirror options of every group, so a loaded optimizer continues exactly.
  void save(torch::serialize::OutputArchive& archive) const override;
  void load(torch::serialize::InputArchive& archive) override;

  // The mirror options as JSON text (for a checkpoint's `extra` and the run's inspection).
  std::string describe_json() const;

 private:
  // d for one parameter (see the header comment); undefined when the parameter has no AdamW state yet.
  torch::Tensor direction_for(const torch::Tensor& parameter, const torch::optim::AdamWOptions& options) const;

  std::vector<MirrorOptions> group_mirror_;
  Direction direction_;
};

class Horst : public MirroredAdamW {
 public:
  Horst(std::vector<torch::optim::OptimizerParamGroup> param_groups, torch::optim::AdamWOptions adamw = {},
        MirrorOptions mirror = default_horst_options())
      : MirroredAdamW(std::move(param_groups), adamw, mirror, Direction::adamw_step) {}
  Horst(std::vector<torch::Tensor> parameters, torch::optim::AdamWOptions adamw = {},
        MirrorOptions mirror = default_horst_options())
      : Horst(std::vector<torch::optim::OptimizerParamGroup>{torch::optim::OptimizerParamGroup(std::move(parameters))},
              adamw, mirror) {}
};

class Ham : public MirroredAdamW {
 public:
  Ham(std::vector<torch::optim::OptimizerParamGroup> param_groups, torch::optim::AdamWOptions adamw = {},
      MirrorOptions mirror = default_ham_options())
      : MirroredAdamW(std::move(param_groups), adamw, mirror, Direction::raw_gradient) {}
  Ham(std::vector<torch::Tensor> parameters, torch::optim::AdamWOptions adamw = {},
      MirrorOptions mirror = default_ham_options())
      : Ham(std::vector<torch::optim::OptimizerParamGroup>{torch::optim::OptimizerParamGroup(std::move(parameters))},
            adamw, mirror) {}
};

// The mirror factor alone, for one tensor: exp(clamp(-α sign(θ) ⊙ d - η β, -c, c)). Exposed for tests and for the
// double-precision toys of the geometry playground, which must follow the same rule.
torch::Tensor mirror_factor(const torch::Tensor& theta, const torch::Tensor& direction, double lr,
                            const MirrorOptions& mirror);

}  // namespace descentlab::optim
