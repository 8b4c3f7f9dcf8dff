#include "app/gui/playground_backend.h"

#include <algorithm>
#include <cmath>

namespace descentlab::gui {

PlaygroundBackendImpl::PlaygroundBackendImpl() : toy_(geometry::make_sparse_toy(40, 100, 5, 7)) {}

std::vector<std::string> PlaygroundBackendImpl::methods() const {
  std::vector<std::string> names;
  for (const auto method : geometry::all_toy_methods()) names.push_back(geometry::toy_method_name(method));
  return names;
}

geometry::ToySettings PlaygroundBackendImpl::toSettings(const widgets::PlaygroundSettings& settings) {
  geometry::ToySettings toy;
  toy.lr = settings.lr;
  toy.steps = settings.steps;
  toy.alpha = settings.alpha;
  toy.beta = settings.beta;
  toy.weight_decay = settings.weight_decay;
  toy.mirror_scale = std::max(1e-12, static_cast<double>(settings.init_scale));
  return toy;
}

std::vector<std::array<double, 2>> PlaygroundBackendImpl::path2d(int method,
                                                                 const widgets::PlaygroundSettings& settings,
                                                                 std::array<double, 2> a, double b,
                                                                 std::array<double, 2> start) const {
  geometry::LinearProblem problem;
  problem.rows = 1;
  problem.cols = 2;
  problem.a = {a[0], a[1]};
  problem.b = {b};
  const auto path = geometry::toy_trajectory(geometry::all_toy_methods().at(static_cast<size_t>(method)), problem,
                                             {start[0], start[1]}, toSettings(settings));
  // At most about 2,000 points to draw; the last one always kept.
  const size_t stride = std::max<size_t>(1, path.size() / 2000);
  std::vector<std::array<double, 2>> points;
  for (size_t k = 0; k < path.size(); k += stride) points.push_back({path[k][0], path[k][1]});
  if ((path.size() - 1) % stride != 0) points.push_back({path.back()[0], path.back()[1]});
  return points;
}

widgets::SparseOutcome PlaygroundBackendImpl::sparseRun(int method, const widgets::PlaygroundSettings& settings) const {
  const auto cols = static_cast<size_t>(toy_.problem.cols);
  const std::vector<double> start(cols, static_cast<double>(settings.init_scale));
  widgets::SparseOutcome outcome;
  outcome.coefficients = geometry::toy_solution(geometry::all_toy_methods().at(static_cast<size_t>(method)),
                                                toy_.problem, start, toSettings(settings));
  outcome.l1 = geometry::norm_l1(outcome.coefficients);
  outcome.l2 = geometry::norm_l2(outcome.coefficients);
  outcome.linf = geometry::norm_linf(outcome.coefficients);
  double error = 0.0;
  for (size_t i = 0; i < cols; ++i) error += std::pow(outcome.coefficients[i] - toy_.truth[i], 2);
  outcome.error = std::sqrt(error);
  const auto found = geometry::support(outcome.coefficients);
  outcome.support_found = static_cast<int>(found.size());
  for (const auto index : found) outcome.support_correct += toy_.truth[static_cast<size_t>(index)] != 0.0 ? 1 : 0;
  outcome.loss = toy_.problem.loss(outcome.coefficients);
  return outcome;
}

QString PlaygroundBackendImpl::sparseDescription() const {
  return QStringLiteral(
             "%1 random equations, %2 unknowns, a truth with 5 non-zeros (grey bars). Every optimizer "
             "starts at the initial scale.")
      .arg(toy_.problem.rows)
      .arg(toy_.problem.cols);
}

}  // namespace descentlab::gui
