#pragma once

#include "widgets/lab_model.h"
#include "widgets/plot_view.h"

class QCPColorGradient;
class QColor;
class QComboBox;

namespace descentlab::widgets {

// Lagrange multipliers λ_l (or the slack g_l, or the resilient relaxation u_l) of the focus run against step,
// one line per layer.
class LambdaView : public PlotView {
  Q_OBJECT

 public:
  explicit LambdaView(LabModel* model, QWidget* parent = nullptr);
  CsvTable table() const override;
  void setSeries(const QString& name);
  // Grouped (LabModel::grouped()): the focus run's group's band of the shown series, one column per layer, over the
  // steps all members reached; group is nullptr when not grouped.
  GroupBand focusGroupBand() const;
  // Whose curves are drawn (the run's name, or the group's caption), in the run's colour, above the legend.
  QString runTitle() const;

 protected:
  void rebuild() override;
  void resetRanges() override;
  bool listsGroups() const override { return false; }  // its legend lists layers: one group is drawn, the focus run's

 private:
  // The run drawn when not grouped: the focus run, else the first run with the series.
  const RunData* drawnRun() const;
  // Grouped: each layer's mean over the focus run's group with its band, and the group's caption above the legend.
  void drawGroupBand(const GroupBand& band, QCPColorGradient& gradient);
  // λ at 0 all along: a note in the plot on why (the constraints do not bind).
  void explainFlatAtZero(const RunData& focus);
  QComboBox* series_ = nullptr;
  // Draws `text` in the strip above the data, at its right, elided to the plot's width.
  void showRunTitle(const QString& text, const QColor& colour);
  QString runTitle_;
  bool flatAtZero_ = false;  // the multipliers shown are 0 at every step and layer
};

}  // namespace descentlab::widgets
