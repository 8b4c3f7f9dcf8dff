#pragma once
// The optimizer-geometry playground's toys (SCIENCE.md §3): underdetermined least squares f(θ) = ½m‖Aθ − b‖² and
// the trajectories of seven optimizers on it, in double precision. No LibTorch, so the playground can re-simulate
// every frame; the rules are those of core/optim (LibTorch's AdamW, then the HORST/HAM mirror factor), and
// tests/test_geometry.cpp checks them step by step against core/optim's Horst and Ham on double tensors.

#include <cstdint>
#include <string>
#include <vector>

namespace descentlab::geometry {

enum class ToyMethod {
  gradient_descent,   // θ ← θ − η ∇f
  sign_descent,       // θ ← θ − η sign(∇f)  (steepest descent in L∞)
  adam,               // Adam, weight decay added to the gradient (L2)
  adamw,              // LibTorch's AdamW: decoupled weight decay θ ← θ(1 − ηλ), then the Adam step
  mirror_hyperbolic,  // mirror descent with the hyperbolic-entropy potential: asinh(θ/s) ← asinh(θ/s) − η ∇f
  ham,                // AdamW, then θ ← θ·exp(clamp(−α sign(θ) η∇f − ηβ, ±c))
  horst,              // AdamW, then θ ← θ·exp(clamp(−α sign(θ) s_k − ηβ, ±c)), s_k the AdamW step itself
};
constexpr int kToyMethods = 7;
const std::vector<ToyMethod>& all_toy_methods();
std::string toy_method_name(ToyMethod method);

struct ToySettings {
  double lr = 0.01;
  int64_t steps = 500;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.0;
  double alpha = 0.0;  // HAM / HORST: strength of the L1 pull
  double beta = 0.0;   // HAM / HORST: multiplicative decay, scaled by η
  double exponent_clamp = 5.0;
  double mirror_scale = 1e-3;  // the hyperbolic-entropy potential's scale s (a small init's size)
};

// The playground's defaults: the settings at which its two toys show each optimizer's implicit bias, chosen by
// measurement (bench/playground_tour.cpp writes results/tours/implicit-bias.{json,md}; tests/test_geometry.cpp checks
// them). Each optimizer has its own learning rate because each has its own units: gradient descent and mirror descent
// step by η times the gradient, sign descent and the Adam family by about η per coordinate whatever the gradient.
struct ToyDefaults {
  std::vector<double> lr;  // one per method, in all_toy_methods() order
  int64_t steps = 0;
  double alpha = 0, beta = 0, weight_decay = 0;
  double init_scale = 0;  // every coordinate's start, and the hyperbolic potential's scale s
  int64_t sparse_rows = 0, sparse_cols = 0, sparse_nonzeros = 0;
  uint64_t sparse_seed = 0;  // the playground's sparse problem
};
const ToyDefaults& toy_defaults();
// The settings `method` runs with: its own learning rate, the shared rest.
ToySettings toy_settings(const ToyDefaults& defaults, ToyMethod method);

// A linear system A θ = b with more unknowns than equations.
struct LinearProblem {
  int64_t rows = 0;
  int64_t cols = 0;
  std::vector<double> a;  // rows × cols, row-major
  std::vector<double> b;  // rows

  double loss(const std::vector<double>& theta) const;  // ½m ‖Aθ − b‖²
  std::vector<double> gradient(const std::vector<double>& theta) const;
  std::vector<double> residual(const std::vector<double>& theta) const;  // Aθ − b
};

// One optimizer's state on a toy problem, stepped one update at a time (the tests compare single steps).
class ToyOptimizer {
 public:
  ToyOptimizer(ToyMethod method, const ToySettings& settings, std::vector<double> start);
  void step(const std::vector<double>& gradient);
  const std::vector<double>& theta() const { return theta_; }
  int64_t steps_taken() const { return step_; }

 private:
  void adam_step(const std::vector<double>& gradient, bool decoupled_decay);

  ToyMethod method_;
  ToySettings settings_;
  std::vector<double> theta_;
  std::vector<double> m_, v_;
  int64_t step_ = 0;
};

// The positions from `start` through `settings.steps` updates (steps + 1 points); stops early, keeping what it
// has, if the iterate leaves the finite numbers.
std::vector<std::vector<double>> toy_trajectory(ToyMethod method, const LinearProblem& problem,
                                                const std::vector<double>& start, const ToySettings& settings);
std::vector<double> toy_solution(ToyMethod method, const LinearProblem& problem, const std::vector<double>& start,
                                 const ToySettings& settings);

// The minimum-L2 exact solution Aᵀ(AAᵀ)⁻¹b (Gaussian elimination with partial pivoting on AAᵀ).
std::vector<double> minimum_l2_solution(const LinearProblem& problem);
// For one equation a·θ = b in any dimension: the minimum-L1 solution (all weight on the largest |a_i|).
std::vector<double> minimum_l1_solution_one_equation(const LinearProblem& problem);
// For one equation a·θ = b: the minimum-L∞ solution, every |θ_i| equal (θ_i = sign(a_i)·b/‖a‖₁), the corner of the
// smallest L∞ ball (a square in 2-D) that touches the solutions.
std::vector<double> minimum_linf_solution_one_equation(const LinearProblem& problem);

// The playground's 2-D toy: the one equation 0.8 x + 0.3 y = 1.
LinearProblem two_d_toy();

// The sparse-recovery toy: A rows × cols with standard normal entries, a `nonzeros`-sparse truth with entries
// ±(1..2), b = A·truth; all from a fixed seed. With f = ½m‖Aθ − b‖² the Hessian AᵀA/m has its non-zero eigenvalues
// near [(√(cols/rows) − 1)², (√(cols/rows) + 1)²], about [0.34, 6.7] at 40 × 100, and the gradient is of order one,
// as in the 2-D toy, so the same learning rates suit both.
struct SparseToy {
  LinearProblem problem;
  std::vector<double> truth;
};
SparseToy make_sparse_toy(int64_t rows, int64_t cols, int64_t nonzeros, uint64_t seed);

double norm_l1(const std::vector<double>& x);
double norm_l2(const std::vector<double>& x);
double norm_linf(const std::vector<double>& x);
// Indices with |x_i| > threshold · max|x|.
std::vector<int64_t> support(const std::vector<double>& x, double threshold = 0.1);
// The indices of the k largest |x_i|, in increasing order (ties: the lower index first).
std::vector<int64_t> top_k_support(const std::vector<double>& x, int64_t k);

}  // namespace descentlab::geometry
