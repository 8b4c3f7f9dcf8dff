#pragma once

#include "widgets/lab_model.h"
#include "widgets/plot_view.h"

#include <QColor>
#include <QVector>

class QCheckBox;
class QComboBox;

namespace descentlab::widgets {

// Per-layer test loss f_l against the layer index 0..L: every evaluation of the focus run from early (light) to
// late (dark), the newest bold; the newest curve of every other layerwise run dashed; a marker where descent breaks
// (f_l > f_{l-1}), in the colour of the run it belongs to and named after it. Or, in the "change" mode, the change
// from the layer before, f_l - f_(l-1), for l = 1..L, with the zero line: above it descent breaks. There the y range
// fits the top half of the layers (where ERM's rise of a few thousandths of a nat sits; the constrained model's
// first layers fall by a nat and would flatten it), unless "fit top layers" is off. Below, where the plot has room:
// the share of test samples descending at each layer, as bars per run, with the descent certificate.
class LayerLossView : public PlotView {
  Q_OBJECT

 public:
  explicit LayerLossView(LabModel* model, QWidget* parent = nullptr);
  CsvTable table() const override;
  // "value" (f_l) or "change" (f_l - f_(l-1)); a tour chooses (core/config/tours.h).
  void setMode(const QString& mode);
  QString mode() const;
  // The change mode's y range fits the top half of the layers (true, the default) or every layer.
  void setFitTopLayers(bool fit);
  // Grouped (LabModel::grouped()): per group of runs with the task of the focus run, the band over its members'
  // test losses at each layer (x = layer; in the change mode f_l - f_(l-1)), at the last evaluation all reached.
  QVector<GroupBand> groupBands() const;

 protected:
  void rebuild() override;
  void resetRanges() override;
  QString readout(QCPAxisRect* rect, double x, double y) const override;
  QString hoverTable(QCPAxisRect* rect, double x, double y) const override;

 private:
  // Before any test evaluation: the runs' newest training per-layer losses, marked as training; false when none.
  bool drawTrainingLayerLoss();
  QVector<const RunData*> runsOfFocusTask(const RunData*& focus, int& otherTask) const;
  int drawNewestCurves(const QVector<const RunData*>& layerwise, const RunData* focus, bool change, bool logY);
  void drawDescendingShares(const QVector<const RunData*>& layerwise, const RunData& focus);
  void drawGroups(bool change, bool logY);
  QCPAxisRect* bars_ = nullptr;
  QCheckBox* allEvaluations_ = nullptr;
  QCheckBox* logY_ = nullptr;
  QComboBox* mode_ = nullptr;
  QCheckBox* fitTop_ = nullptr;
  bool changeMode() const;
  // The change mode's fitted y range (valid when `changeRangeValid_`), and the layers it fits.
  double changeLow_ = 0, changeHigh_ = 0;
  bool changeRangeValid_ = false;
  // Every layerwise run's newest test losses as drawn (for the hover table): name, colour, f_0..f_L.
  struct Drawn {
    QString name;
    QColor colour;
    QVector<double> losses;
  };
  QVector<Drawn> drawn_;
};

}  // namespace descentlab::widgets
