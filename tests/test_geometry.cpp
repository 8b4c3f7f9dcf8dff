// The playground's toy optimizers (core/geometry): the implicit biases SCIENCE.md §3 states, and the update rules
// checked step by step against core/optim (LibTorch's AdamW, HORST and HAM) on double tensors.

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>

#include "core/geometry/toy_optimizers.h"
#include "core/optim/mirror_adamw.h"

namespace descentlab::geometry {
namespace {

LinearProblem one_equation() {  // 0.8 x + 0.3 y = 1
  return two_d_toy();
}

double distance(const std::vector<double>& x, const std::vector<double>& y) {
  double sum = 0.0;
  for (size_t i = 0; i < x.size(); ++i) sum += (x[i] - y[i]) * (x[i] - y[i]);
  return std::sqrt(sum);
}

TEST(Geometry, GradientDescentFromZeroReachesTheMinimumL2Solution) {
  ToySettings settings;
  settings.lr = 0.5;
  settings.steps = 5000;
  const auto problem = one_equation();
  const auto end = toy_solution(ToyMethod::gradient_descent, problem, {0.0, 0.0}, settings);
  EXPECT_LT(distance(end, minimum_l2_solution(problem)), 1e-3);
  // In higher dimension too (the sparse toy's system).
  const auto toy = make_sparse_toy(40, 100, 5, 7);
  settings.lr = 0.2;  // the Hessian's largest eigenvalue is about 6.7: stable below 0.3
  settings.steps = 2000;
  const auto sparse_end =
      toy_solution(ToyMethod::gradient_descent, toy.problem, std::vector<double>(100, 0.0), settings);
  EXPECT_LT(distance(sparse_end, minimum_l2_solution(toy.problem)), 1e-3);
  EXPECT_LT(toy.problem.loss(sparse_end), 1e-8);
}

TEST(Geometry, HyperbolicMirrorDescentFromASmallInitEndsNearTheMinimumL1Solution) {
  ToySettings settings;
  settings.lr = 0.05;
  settings.steps = 20000;
  settings.mirror_scale = 1e-4;
  const auto problem = one_equation();
  const auto end = toy_solution(ToyMethod::mirror_hyperbolic, problem, {1e-4, 1e-4}, settings);
  EXPECT_LT(distance(end, minimum_l1_solution_one_equation(problem)), 0.05);
  EXPECT_GT(distance(end, minimum_l2_solution(problem)), 0.3);  // and not at the L2 solution
  // The sparse toy: the 5-sparse truth is the minimum-L1 solution of 40 random equations; the support is found.
  const auto toy = make_sparse_toy(40, 100, 5, 7);
  settings.lr = 0.5;
  settings.steps = 4000;
  settings.mirror_scale = 1e-6;
  const auto sparse_end =
      toy_solution(ToyMethod::mirror_hyperbolic, toy.problem, std::vector<double>(100, 1e-6), settings);
  EXPECT_EQ(support(sparse_end), support(toy.truth));
  EXPECT_LT(distance(sparse_end, toy.truth), 0.05 * norm_l2(toy.truth));
  // Gradient descent from zero does not find it: the minimum-L2 solution is dense.
  const auto l2 = minimum_l2_solution(toy.problem);
  EXPECT_GT(support(l2).size(), 20u);
}

// The playground's defaults (toy_defaults(), measured in bench/playground_tour.cpp): on the sparse toy's seeds 1-3
// the hyperbolic methods recover the truth's support and gradient descent does not, ending at the dense minimum-L2
// solution; Adam and sign descent end denser still (a larger L1 norm).
TEST(Geometry, AtThePlaygroundDefaultsTheHyperbolicMethodsRecoverTheSparseSupportAndGradientDescentDoesNot) {
  const auto& d = toy_defaults();
  for (const uint64_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const auto toy = make_sparse_toy(d.sparse_rows, d.sparse_cols, d.sparse_nonzeros, seed);
    const std::vector<double> start(static_cast<size_t>(d.sparse_cols), d.init_scale);
    auto end = [&](ToyMethod method) { return toy_solution(method, toy.problem, start, toy_settings(d, method)); };
    const auto truth = support(toy.truth);
    ASSERT_EQ(truth.size(), static_cast<size_t>(d.sparse_nonzeros));
    for (const auto method : {ToyMethod::mirror_hyperbolic, ToyMethod::ham, ToyMethod::horst}) {
      const auto theta = end(method);
      EXPECT_EQ(support(theta), truth) << toy_method_name(method);
      EXPECT_EQ(top_k_support(theta, d.sparse_nonzeros), truth) << toy_method_name(method);
      EXPECT_LT(distance(theta, toy.truth), 0.1 * norm_l2(toy.truth)) << toy_method_name(method);
      EXPECT_LT(toy.problem.loss(theta), 1e-2) << toy_method_name(method);
    }
    // Gradient descent: the minimum-L2 solution (least squares), dense, far from the truth.
    const auto gd = end(ToyMethod::gradient_descent);
    const auto l2 = minimum_l2_solution(toy.problem);
    EXPECT_LT(distance(gd, l2), 1e-2 * norm_l2(l2));
    EXPECT_LT(toy.problem.loss(gd), 1e-12);
    EXPECT_NE(support(gd), truth);
    EXPECT_GT(support(gd).size(), 30u);
    EXPECT_GT(distance(gd, toy.truth), 0.5 * norm_l2(toy.truth));
    for (const auto method : {ToyMethod::sign_descent, ToyMethod::adam}) {
      const auto theta = end(method);
      EXPECT_GT(support(theta).size(), 50u) << toy_method_name(method);
      EXPECT_GT(norm_l1(theta), norm_l1(gd)) << toy_method_name(method);
    }
  }
}

// The playground's caption: HORST's sparsity on the sparse toy needs the decay β; with β = 0 it stays dense.
TEST(Geometry, AtThePlaygroundDefaultsHorstWithoutTheDecayDoesNotRecoverTheSupport) {
  auto d = toy_defaults();
  d.beta = 0.0;
  const auto toy = make_sparse_toy(d.sparse_rows, d.sparse_cols, d.sparse_nonzeros, d.sparse_seed);
  const std::vector<double> start(static_cast<size_t>(d.sparse_cols), d.init_scale);
  const auto theta = toy_solution(ToyMethod::horst, toy.problem, start, toy_settings(d, ToyMethod::horst));
  EXPECT_GT(support(theta).size(), 2 * support(toy.truth).size());
}

// The 2-D toy at the defaults, from the initial scale on both coordinates: gradient descent ends at the minimum-L2
// point, mirror descent and HAM near the minimum-L1 one, sign descent, Adam and HORST at the L∞ corner x = y (HORST's
// mirror factor scales AdamW's normalised step, the same for x and y with one equation).
TEST(Geometry, AtThePlaygroundDefaultsThe2DToyEndsAtEachMethodsBallsCorner) {
  const auto& d = toy_defaults();
  const auto problem = two_d_toy();
  const std::vector<double> start(2, d.init_scale);
  auto end = [&](ToyMethod method) { return toy_solution(method, problem, start, toy_settings(d, method)); };
  const auto l2 = minimum_l2_solution(problem), l1 = minimum_l1_solution_one_equation(problem),
             linf = minimum_linf_solution_one_equation(problem);
  EXPECT_NEAR(linf[0], 1.0 / 1.1, 1e-12);
  EXPECT_NEAR(linf[1], 1.0 / 1.1, 1e-12);
  EXPECT_LT(distance(end(ToyMethod::gradient_descent), l2), 1e-3);
  const auto sign = end(ToyMethod::sign_descent);
  EXPECT_LT(distance(sign, linf), 3 * toy_settings(d, ToyMethod::sign_descent).lr);  // it ends oscillating by ±η
  EXPECT_GT(distance(sign, l2), 0.4);
  EXPECT_LT(distance(end(ToyMethod::adam), linf), 1e-3);
  EXPECT_LT(distance(end(ToyMethod::horst), linf), 1e-2);
  EXPECT_LT(distance(end(ToyMethod::mirror_hyperbolic), l1), 1e-2);
  EXPECT_LT(distance(end(ToyMethod::ham), l1), 0.06);
}

TEST(Geometry, TopKSupportAndTheLinfSolution) {
  EXPECT_EQ(top_k_support({0.1, -3.0, 0.0, 2.0, -2.5}, 3), (std::vector<int64_t>{1, 3, 4}));
  EXPECT_EQ(top_k_support({1.0, 1.0, 1.0}, 2), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(top_k_support({1.0}, 4), (std::vector<int64_t>{0}));
  LinearProblem problem;
  problem.rows = 1;
  problem.cols = 3;
  problem.a = {2.0, -1.0, 1.0};
  problem.b = {8.0};
  const auto corner = minimum_linf_solution_one_equation(problem);
  EXPECT_EQ(corner, (std::vector<double>{2.0, -2.0, 2.0}));
  EXPECT_DOUBLE_EQ(problem.loss(corner), 0.0);
}

TEST(Geometry, HorstWithAlphaZeroFollowsAdamExactly) {
  const auto toy = make_sparse_toy(10, 40, 3, 3);
  ToySettings settings;
  settings.lr = 0.01;
  settings.steps = 300;
  std::vector<double> start(40);
  for (size_t i = 0; i < start.size(); ++i) start[i] = 0.1 * std::sin(1.0 + static_cast<double>(i));
  const auto adam = toy_trajectory(ToyMethod::adam, toy.problem, start, settings);
  const auto horst = toy_trajectory(ToyMethod::horst, toy.problem, start, settings);
  ASSERT_EQ(adam.size(), horst.size());
  for (size_t k = 0; k < adam.size(); ++k) ASSERT_EQ(adam[k], horst[k]) << "step " << k;
}

TEST(Geometry, HorstWithAlphaEndsWithASmallerL1NormThanAdamW) {
  const auto toy = make_sparse_toy(10, 40, 3, 3);
  ToySettings settings;
  settings.lr = 0.01;
  settings.steps = 3000;
  settings.weight_decay = 0.1;
  std::vector<double> start(40);
  for (size_t i = 0; i < start.size(); ++i) start[i] = 0.1 * std::sin(1.0 + static_cast<double>(i));
  const auto adamw = toy_solution(ToyMethod::adamw, toy.problem, start, settings);
  settings.alpha = 50.0;
  const auto horst = toy_solution(ToyMethod::horst, toy.problem, start, settings);
  EXPECT_LT(norm_l1(horst), 0.9 * norm_l1(adamw)) << norm_l1(horst) << " vs " << norm_l1(adamw);
  EXPECT_LT(toy.problem.loss(horst), 1e-3);  // it still solves the system
}

// The toy rules are core/optim's: the same start and gradients through LibTorch's AdamW, Horst and Ham on a double
// tensor of shape [1, n] (dim 2, so the mirror step applies) give the same iterates.
void expect_same_as_core(ToyMethod method, double alpha, double beta, double weight_decay, bool exact) {
  const auto toy = make_sparse_toy(10, 40, 3, 11);
  ToySettings settings;
  settings.lr = 0.01;
  settings.alpha = alpha;
  settings.beta = beta;
  settings.weight_decay = weight_decay;
  std::vector<double> start(40);
  for (size_t i = 0; i < start.size(); ++i) start[i] = 0.2 * std::cos(0.5 + static_cast<double>(i));
  ToyOptimizer toy_optimizer(method, settings, start);

  auto parameter = torch::tensor(start, torch::kFloat64).reshape({1, 40}).requires_grad_(true);
  const auto adamw = torch::optim::AdamWOptions(settings.lr).weight_decay(weight_decay);
  optim::MirrorOptions mirror;
  mirror.alpha = alpha;
  mirror.beta = beta;
  std::unique_ptr<torch::optim::Optimizer> core;
  if (method == ToyMethod::adamw)
    core = std::make_unique<torch::optim::AdamW>(std::vector<torch::Tensor>{parameter}, adamw);
  if (method == ToyMethod::horst)
    core = std::make_unique<optim::Horst>(std::vector<torch::Tensor>{parameter}, adamw, mirror);
  if (method == ToyMethod::ham)
    core = std::make_unique<optim::Ham>(std::vector<torch::Tensor>{parameter}, adamw, mirror);
  ASSERT_TRUE(core);
  for (int step = 0; step < 200; ++step) {
    const auto gradient = toy.problem.gradient(toy_optimizer.theta());
    parameter.mutable_grad() = torch::tensor(gradient, torch::kFloat64).reshape({1, 40});
    core->step();
    toy_optimizer.step(gradient);
    const auto* values = parameter.data_ptr<double>();
    for (size_t i = 0; i < 40; ++i) {
      if (exact) {
        ASSERT_EQ(values[i], toy_optimizer.theta()[i]) << toy_method_name(method) << " step " << step << " i " << i;
      } else {
        ASSERT_NEAR(values[i], toy_optimizer.theta()[i], 1e-12 * (1.0 + std::abs(values[i])))
            << toy_method_name(method) << " step " << step << " i " << i;
      }
    }
  }
}

// To rounding, not bit for bit: LibTorch's vectorised kernels may fuse multiply-adds.
TEST(Geometry, TheToyAdamWIsLibTorchsAdamW) {
  expect_same_as_core(ToyMethod::adamw, 0, 0, 0.1, false);
}
TEST(Geometry, TheToyHorstIsCoreHorst) {
  expect_same_as_core(ToyMethod::horst, 20.0, 1e-3, 0.1, false);
}
TEST(Geometry, TheToyHamIsCoreHam) {
  expect_same_as_core(ToyMethod::ham, 20.0, 1e-3, 0.0, false);  // α·η·g of order 0.1 per step: it stays finite
}

}  // namespace
}  // namespace descentlab::geometry
