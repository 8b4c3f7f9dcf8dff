#pragma once
// The playground's simulations: core/geometry's toy optimizers (double-precision versions of core/optim's rules,
// tested against them) behind the widget's PlaygroundBackend, with core/geometry's measured defaults
// (toy_defaults(): each optimizer's own learning rate, the sparse problem; results/tours/implicit-bias.md).

#include "core/geometry/toy_optimizers.h"

#include "widgets/geometry_playground.h"

namespace descentlab::gui {

class PlaygroundBackendImpl : public widgets::PlaygroundBackend {
 public:
  PlaygroundBackendImpl();
  std::vector<std::string> methods() const override;
  widgets::PlaygroundSettings defaultSettings() const override;
  std::vector<std::array<double, 2>> path2d(int method, const widgets::PlaygroundSettings& settings,
                                            std::array<double, 2> a, double b,
                                            std::array<double, 2> start) const override;
  std::vector<double> sparseTruth() const override { return toy_.truth; }
  widgets::SparseOutcome sparseRun(int method, const widgets::PlaygroundSettings& settings) const override;
  QString sparseDescription() const override;
  QString planeDescription() const override;

  // The settings `method` runs with: its own rate times the common factor, the shared rest.
  static geometry::ToySettings toSettings(const widgets::PlaygroundSettings& settings, int method);

 private:
  geometry::SparseToy toy_;
};

}  // namespace descentlab::gui
