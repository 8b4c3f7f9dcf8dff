#include "app/gui/playground_backend.h"

#include <algorithm>
#include <cmath>

namespace descentlab::gui {
namespace {

QString pointText(const std::vector<double>& p) {
  return QStringLiteral("(%1, %2)").arg(p[0], 0, 'f', 2).arg(p[1], 0, 'f', 2);
}

}  // namespace

PlaygroundBackendImpl::PlaygroundBackendImpl()
    : toy_(geometry::make_sparse_toy(geometry::toy_defaults().sparse_rows, geometry::toy_defaults().sparse_cols,
                                     geometry::toy_defaults().sparse_nonzeros, geometry::toy_defaults().sparse_seed)) {}

std::vector<std::string> PlaygroundBackendImpl::methods() const {
  std::vector<std::string> names;
  for (const auto method : geometry::all_toy_methods()) names.push_back(geometry::toy_method_name(method));
  return names;
}

widgets::PlaygroundSettings PlaygroundBackendImpl::defaultSettings() const {
  const auto& d = geometry::toy_defaults();
  widgets::PlaygroundSettings settings;
  settings.lr = 1.0;
  settings.rates = d.lr;
  settings.steps = static_cast<int>(d.steps);
  settings.alpha = d.alpha;
  settings.beta = d.beta;
  settings.weight_decay = d.weight_decay;
  settings.init_scale = d.init_scale;
  return settings;
}

geometry::ToySettings PlaygroundBackendImpl::toSettings(const widgets::PlaygroundSettings& settings, int method) {
  const auto& d = geometry::toy_defaults();
  const auto index = static_cast<size_t>(method);
  geometry::ToySettings toy;
  toy.lr = settings.lr * (index < settings.rates.size() ? settings.rates[index] : d.lr.at(index));
  toy.steps = settings.steps;
  toy.alpha = settings.alpha;
  toy.beta = settings.beta;
  toy.weight_decay = settings.weight_decay;
  toy.mirror_scale = std::max(1e-12, settings.init_scale);
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
                                             {start[0], start[1]}, toSettings(settings, method));
  // At most about 2,000 points to draw; the last one always kept.
  const size_t stride = std::max<size_t>(1, path.size() / 2000);
  std::vector<std::array<double, 2>> points;
  for (size_t k = 0; k < path.size(); k += stride) points.push_back({path[k][0], path[k][1]});
  if ((path.size() - 1) % stride != 0) points.push_back({path.back()[0], path.back()[1]});
  return points;
}

widgets::SparseOutcome PlaygroundBackendImpl::sparseRun(int method, const widgets::PlaygroundSettings& settings) const {
  const auto cols = static_cast<size_t>(toy_.problem.cols);
  const std::vector<double> start(cols, settings.init_scale);
  widgets::SparseOutcome outcome;
  outcome.coefficients = geometry::toy_solution(geometry::all_toy_methods().at(static_cast<size_t>(method)),
                                                toy_.problem, start, toSettings(settings, method));
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

// What to watch at the defaults, as measured (results/tours/implicit-bias.md; tests/test_geometry.cpp checks each
// claim at the defaults, on this problem's seed and two more).
QString PlaygroundBackendImpl::sparseDescription() const {
  return QStringLiteral(
             "%1 random equations, %2 unknowns, a truth with %3 non-zeros (grey bars). At the defaults gradient "
             "descent ends at the dense minimum-L2 solution, sign descent and Adam denser still; mirror descent, HAM "
             "and HORST find the %3 true non-zeros (HORST only with the decay beta: try beta = 0).")
      .arg(toy_.problem.rows)
      .arg(toy_.problem.cols)
      .arg(geometry::toy_defaults().sparse_nonzeros);
}

QString PlaygroundBackendImpl::planeDescription() const {
  const auto plane = geometry::two_d_toy();
  return QStringLiteral(
             "At the defaults gradient descent ends at the minimum-L2 point %1, mirror descent and HAM at the "
             "minimum-L1 point %2, sign descent and Adam at the Linf corner %3. So does HORST: its L1 pull scales "
             "Adam's step, the same for x and y with one equation.")
      .arg(pointText(geometry::minimum_l2_solution(plane)))
      .arg(pointText(geometry::minimum_l1_solution_one_equation(plane)))
      .arg(pointText(geometry::minimum_linf_solution_one_equation(plane)));
}

}  // namespace descentlab::gui
