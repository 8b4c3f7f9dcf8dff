#include "core/geometry/toy_optimizers.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

namespace descentlab::geometry {
namespace {

double sign(double x) {
  return x > 0 ? 1.0 : (x < 0 ? -1.0 : 0.0);
}

bool finite(const std::vector<double>& x) {
  return std::all_of(x.begin(), x.end(), [](double value) { return std::isfinite(value); });
}

}  // namespace

const std::vector<ToyMethod>& all_toy_methods() {
  static const std::vector<ToyMethod> methods = {
      ToyMethod::gradient_descent,  ToyMethod::sign_descent, ToyMethod::adam, ToyMethod::adamw,
      ToyMethod::mirror_hyperbolic, ToyMethod::ham,          ToyMethod::horst};
  return methods;
}

std::string toy_method_name(ToyMethod method) {
  switch (method) {
    case ToyMethod::gradient_descent: return "gradient descent";
    case ToyMethod::sign_descent: return "sign descent";
    case ToyMethod::adam: return "Adam";
    case ToyMethod::adamw: return "AdamW";
    case ToyMethod::mirror_hyperbolic: return "hyperbolic mirror descent";
    case ToyMethod::ham: return "HAM";
    case ToyMethod::horst: return "HORST";
  }
  return "?";
}

// Measured in bench/playground_tour.cpp over the sparse toy's seeds 1-3 (and the 2-D toy); see
// results/tours/implicit-bias.md for the numbers. In short: gradient descent at 0.1 and Adam at 0.01 converge well
// within the steps; mirror descent needs the small scale 1e-4 to end near the minimum-L1 solution, and 0.5 to get
// there in 1,000 steps; HAM and HORST find the sparse support with a strong pull (α = 1000) and the decay β = 20, HAM
// at a rate small enough (5e-4) that its mirror factor, not AdamW's step, does the moving.
const ToyDefaults& toy_defaults() {
  static const ToyDefaults defaults = [] {
    ToyDefaults d;
    //      gradient descent, sign descent, Adam, AdamW, hyperbolic mirror descent, HAM, HORST
    d.lr = {0.1, 0.003, 0.01, 0.01, 0.5, 5e-4, 3e-3};
    d.steps = 1000;
    d.alpha = 1000.0;
    d.beta = 20.0;
    d.weight_decay = 0.0;
    d.init_scale = 1e-4;
    d.sparse_rows = 40;
    d.sparse_cols = 100;
    d.sparse_nonzeros = 5;
    d.sparse_seed = 1;
    return d;
  }();
  return defaults;
}

ToySettings toy_settings(const ToyDefaults& defaults, ToyMethod method) {
  const auto& methods = all_toy_methods();
  const auto at = std::find(methods.begin(), methods.end(), method);
  ToySettings settings;
  settings.lr = defaults.lr.at(static_cast<size_t>(at - methods.begin()));
  settings.steps = defaults.steps;
  settings.alpha = defaults.alpha;
  settings.beta = defaults.beta;
  settings.weight_decay = defaults.weight_decay;
  settings.mirror_scale = defaults.init_scale;
  return settings;
}

LinearProblem two_d_toy() {
  LinearProblem problem;
  problem.rows = 1;
  problem.cols = 2;
  problem.a = {0.8, 0.3};
  problem.b = {1.0};
  return problem;
}

std::vector<double> LinearProblem::residual(const std::vector<double>& theta) const {
  std::vector<double> r(static_cast<size_t>(rows), 0.0);
  for (int64_t i = 0; i < rows; ++i) {
    double sum = 0.0;
    for (int64_t j = 0; j < cols; ++j) sum += a[static_cast<size_t>(i * cols + j)] * theta[static_cast<size_t>(j)];
    r[static_cast<size_t>(i)] = sum - b[static_cast<size_t>(i)];
  }
  return r;
}

double LinearProblem::loss(const std::vector<double>& theta) const {
  double sum = 0.0;
  for (double value : residual(theta)) sum += value * value;
  return 0.5 * sum / static_cast<double>(rows);
}

std::vector<double> LinearProblem::gradient(const std::vector<double>& theta) const {
  const auto r = residual(theta);
  std::vector<double> g(static_cast<size_t>(cols), 0.0);
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) {
      g[static_cast<size_t>(j)] += a[static_cast<size_t>(i * cols + j)] * r[static_cast<size_t>(i)];
    }
  }
  for (auto& value : g) value /= static_cast<double>(rows);
  return g;
}

ToyOptimizer::ToyOptimizer(ToyMethod method, const ToySettings& settings, std::vector<double> start)
    : method_(method), settings_(settings), theta_(std::move(start)) {
  m_.assign(theta_.size(), 0.0);
  v_.assign(theta_.size(), 0.0);
}

// LibTorch's Adam / AdamW step, operation for operation (torch/csrc/api/src/optim/adamw.cpp). For HORST, m_ and v_
// then give s_k exactly as core/optim recomputes it.
void ToyOptimizer::adam_step(const std::vector<double>& gradient, bool decoupled_decay) {
  const auto& s = settings_;
  const double bias_correction1 = 1.0 - std::pow(s.beta1, static_cast<double>(step_));
  const double bias_correction2 = 1.0 - std::pow(s.beta2, static_cast<double>(step_));
  const double step_size = s.lr / bias_correction1;
  for (size_t i = 0; i < theta_.size(); ++i) {
    double g = gradient[i];
    if (decoupled_decay) {
      theta_[i] *= 1.0 - s.lr * s.weight_decay;
    } else {
      g += s.weight_decay * theta_[i];
    }
    m_[i] = m_[i] * s.beta1 + g * (1.0 - s.beta1);
    v_[i] = v_[i] * s.beta2 + g * g * (1.0 - s.beta2);
    const double denom = std::sqrt(v_[i]) / std::sqrt(bias_correction2) + s.eps;
    theta_[i] += -step_size * (m_[i] / denom);  // addcdiv_(m, denom, -step_size)
  }
}

void ToyOptimizer::step(const std::vector<double>& gradient) {
  ++step_;
  const auto& s = settings_;
  switch (method_) {
    case ToyMethod::gradient_descent:
      for (size_t i = 0; i < theta_.size(); ++i) theta_[i] -= s.lr * (gradient[i] + s.weight_decay * theta_[i]);
      return;
    case ToyMethod::sign_descent:
      for (size_t i = 0; i < theta_.size(); ++i) theta_[i] -= s.lr * sign(gradient[i] + s.weight_decay * theta_[i]);
      return;
    case ToyMethod::adam: adam_step(gradient, false); return;
    case ToyMethod::adamw: adam_step(gradient, true); return;
    case ToyMethod::mirror_hyperbolic:
      for (size_t i = 0; i < theta_.size(); ++i) {
        const double dual = std::asinh(theta_[i] / s.mirror_scale) - s.lr * (gradient[i] + s.weight_decay * theta_[i]);
        theta_[i] = s.mirror_scale * std::sinh(dual);
      }
      return;
    case ToyMethod::ham:
    case ToyMethod::horst: {
      adam_step(gradient, true);
      const double bias_correction1 = 1.0 - std::pow(s.beta1, static_cast<double>(step_));
      const double bias_correction2 = 1.0 - std::pow(s.beta2, static_cast<double>(step_));
      for (size_t i = 0; i < theta_.size(); ++i) {
        const double direction =
            method_ == ToyMethod::horst
                ? (m_[i] * (s.lr / bias_correction1)) / (std::sqrt(v_[i]) / std::sqrt(bias_correction2) + s.eps)
                : gradient[i] * s.lr;
        // As core/optim's mirror_factor forms it: (sign(θ)·d)·(−α), then − ηβ, clamp, exp.
        double exponent = (sign(theta_[i]) * direction) * -s.alpha;
        if (s.beta != 0.0) exponent -= s.lr * s.beta;
        exponent = std::clamp(exponent, -s.exponent_clamp, s.exponent_clamp);
        theta_[i] *= std::exp(exponent);
      }
      return;
    }
  }
}

std::vector<std::vector<double>> toy_trajectory(ToyMethod method, const LinearProblem& problem,
                                                const std::vector<double>& start, const ToySettings& settings) {
  ToyOptimizer optimizer(method, settings, start);
  std::vector<std::vector<double>> path;
  path.reserve(static_cast<size_t>(settings.steps) + 1);
  path.push_back(start);
  for (int64_t k = 0; k < settings.steps; ++k) {
    optimizer.step(problem.gradient(optimizer.theta()));
    if (!finite(optimizer.theta())) break;
    path.push_back(optimizer.theta());
  }
  return path;
}

std::vector<double> toy_solution(ToyMethod method, const LinearProblem& problem, const std::vector<double>& start,
                                 const ToySettings& settings) {
  ToyOptimizer optimizer(method, settings, start);
  std::vector<double> last = start;
  for (int64_t k = 0; k < settings.steps; ++k) {
    optimizer.step(problem.gradient(optimizer.theta()));
    if (!finite(optimizer.theta())) break;
    last = optimizer.theta();
  }
  return last;
}

std::vector<double> minimum_l2_solution(const LinearProblem& problem) {
  const auto m = static_cast<size_t>(problem.rows), n = static_cast<size_t>(problem.cols);
  // Solve (AAᵀ) y = b, then θ = Aᵀ y.
  std::vector<double> gram(m * m, 0.0), y = problem.b;
  for (size_t i = 0; i < m; ++i) {
    for (size_t k = 0; k < m; ++k) {
      double sum = 0.0;
      for (size_t j = 0; j < n; ++j) sum += problem.a[i * n + j] * problem.a[k * n + j];
      gram[i * m + k] = sum;
    }
  }
  for (size_t column = 0; column < m; ++column) {
    size_t pivot = column;
    for (size_t row = column + 1; row < m; ++row) {
      if (std::abs(gram[row * m + column]) > std::abs(gram[pivot * m + column])) pivot = row;
    }
    if (std::abs(gram[pivot * m + column]) < 1e-300) throw std::invalid_argument("A has dependent rows");
    if (pivot != column) {
      for (size_t k = 0; k < m; ++k) std::swap(gram[pivot * m + k], gram[column * m + k]);
      std::swap(y[pivot], y[column]);
    }
    for (size_t row = column + 1; row < m; ++row) {
      const double factor = gram[row * m + column] / gram[column * m + column];
      for (size_t k = column; k < m; ++k) gram[row * m + k] -= factor * gram[column * m + k];
      y[row] -= factor * y[column];
    }
  }
  for (size_t row = m; row-- > 0;) {
    double sum = y[row];
    for (size_t k = row + 1; k < m; ++k) sum -= gram[row * m + k] * y[k];
    y[row] = sum / gram[row * m + row];
  }
  std::vector<double> theta(n, 0.0);
  for (size_t j = 0; j < n; ++j) {
    for (size_t i = 0; i < m; ++i) theta[j] += problem.a[i * n + j] * y[i];
  }
  return theta;
}

std::vector<double> minimum_l1_solution_one_equation(const LinearProblem& problem) {
  if (problem.rows != 1) throw std::invalid_argument("minimum_l1_solution_one_equation needs exactly one equation");
  size_t best = 0;
  for (size_t j = 1; j < problem.a.size(); ++j) {
    if (std::abs(problem.a[j]) > std::abs(problem.a[best])) best = j;
  }
  std::vector<double> theta(problem.a.size(), 0.0);
  theta[best] = problem.b[0] / problem.a[best];
  return theta;
}

std::vector<double> minimum_linf_solution_one_equation(const LinearProblem& problem) {
  if (problem.rows != 1) throw std::invalid_argument("minimum_linf_solution_one_equation needs exactly one equation");
  const double l1 = norm_l1(problem.a);
  if (l1 == 0.0) throw std::invalid_argument("the equation has no unknowns");
  std::vector<double> theta(problem.a.size(), 0.0);
  for (size_t j = 0; j < theta.size(); ++j) theta[j] = sign(problem.a[j]) * problem.b[0] / l1;
  return theta;
}

SparseToy make_sparse_toy(int64_t rows, int64_t cols, int64_t nonzeros, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::normal_distribution<double> normal(0.0, 1.0);  // unit variance: gradients of order one (see the header)
  SparseToy toy;
  toy.problem.rows = rows;
  toy.problem.cols = cols;
  toy.problem.a.resize(static_cast<size_t>(rows * cols));
  for (auto& value : toy.problem.a) value = normal(random);
  toy.truth.assign(static_cast<size_t>(cols), 0.0);
  std::vector<int64_t> indices(static_cast<size_t>(cols));
  for (int64_t j = 0; j < cols; ++j) indices[static_cast<size_t>(j)] = j;
  std::shuffle(indices.begin(), indices.end(), random);
  std::uniform_real_distribution<double> magnitude(1.0, 2.0);
  for (int64_t k = 0; k < nonzeros; ++k) {
    toy.truth[static_cast<size_t>(indices[static_cast<size_t>(k)])] =
        (random() % 2 == 0 ? 1.0 : -1.0) * magnitude(random);
  }
  toy.problem.b.assign(static_cast<size_t>(rows), 0.0);
  const auto r = toy.problem.residual(toy.truth);  // A·truth − 0
  for (int64_t i = 0; i < rows; ++i) toy.problem.b[static_cast<size_t>(i)] = r[static_cast<size_t>(i)];
  return toy;
}

double norm_l1(const std::vector<double>& x) {
  double sum = 0.0;
  for (double value : x) sum += std::abs(value);
  return sum;
}

double norm_l2(const std::vector<double>& x) {
  double sum = 0.0;
  for (double value : x) sum += value * value;
  return std::sqrt(sum);
}

double norm_linf(const std::vector<double>& x) {
  double largest = 0.0;
  for (double value : x) largest = std::max(largest, std::abs(value));
  return largest;
}

std::vector<int64_t> support(const std::vector<double>& x, double threshold) {
  const double largest = norm_linf(x);
  std::vector<int64_t> indices;
  for (size_t i = 0; i < x.size(); ++i) {
    if (largest > 0 && std::abs(x[i]) > threshold * largest) indices.push_back(static_cast<int64_t>(i));
  }
  return indices;
}

std::vector<int64_t> top_k_support(const std::vector<double>& x, int64_t k) {
  std::vector<int64_t> order(x.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int64_t>(i);
  const auto count = static_cast<size_t>(std::clamp<int64_t>(k, 0, static_cast<int64_t>(x.size())));
  std::stable_sort(order.begin(), order.end(), [&](int64_t left, int64_t right) {
    return std::abs(x[static_cast<size_t>(left)]) > std::abs(x[static_cast<size_t>(right)]);
  });
  order.resize(count);
  std::sort(order.begin(), order.end());
  return order;
}

}  // namespace descentlab::geometry
