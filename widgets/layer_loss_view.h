#pragma once

#include "widgets/plot_view.h"

class QCheckBox;

namespace descentlab::widgets {

// Per-layer test loss f_l against the layer index 0..L: every evaluation of the focus run from early (light) to
// late (dark), the newest bold; the newest curve of every other layerwise run dashed; a marker where descent breaks
// (f_l > f_{l-1}). Below, where the plot has room: the share of test samples descending at each layer, as bars
// per run, with the descent certificate.
class LayerLossView : public PlotView {
  Q_OBJECT

 public:
  explicit LayerLossView(LabModel* model, QWidget* parent = nullptr);
  QString csv() const override;

 protected:
  void rebuild() override;
  void resetRanges() override;
  QString readout(QCPAxisRect* rect, double x, double y) const override;

 private:
  // Before any test evaluation: the runs' newest training per-layer losses, marked as training; false when none.
  bool drawTrainingLayerLoss();
  QCPAxisRect* bars_ = nullptr;
  QCheckBox* allEvaluations_ = nullptr;
  QCheckBox* logY_ = nullptr;
};

}  // namespace descentlab::widgets
