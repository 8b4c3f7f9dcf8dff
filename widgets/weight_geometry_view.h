#pragma once

#include "widgets/plot_view.h"

class QCheckBox;
class QCPColorScale;
class QComboBox;
class QLabel;

namespace descentlab::widgets {

// Weight geometry: the weight-magnitude histogram on a log |w| axis, every run overlaid for the same tensor group
// (AdamW vs HAM vs HORST), the focus run's histogram over time as a heat map, and each run's sparsity and
// near-zero share in words.
class WeightGeometryView : public PlotView {
  Q_OBJECT

 public:
  explicit WeightGeometryView(LabModel* model, QWidget* parent = nullptr);
  QString csv() const override;
  void setGroup(const QString& name);

 protected:
  void rebuild() override;
  void resetRanges() override;
  QString readout(QCPAxisRect* rect, double x, double y) const override;

 private:
  QComboBox* group_ = nullptr;
  QCheckBox* zeros_ = nullptr;
  QLabel* summary_ = nullptr;
  QCPAxisRect* heat_ = nullptr;
  QCPColorScale* scale_ = nullptr;
};

}  // namespace descentlab::widgets
