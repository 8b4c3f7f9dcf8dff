#pragma once
// Small multiples (issue 54 item 9): a grid of small plots of the open runs, one per metric (every scalar series
// the runs record: the training loss, the test metric, the learning rate, …) or one per layer (each layer's test
// loss fₗ against step), chosen in the view; what TensorBoard's and W&B's dashboards lay out. Opened from the
// training-curves views' "Grid…" button as a window of its own, and redrawn with the lab as runs change.

#include <QVector>

#include "widgets/plot_view.h"

class QComboBox;
class QCPLayoutGrid;
class QTimer;

namespace descentlab::widgets {

class ElidedLabel;
class RunData;

class SmallMultiplesView : public PlotView {
  Q_OBJECT

 public:
  enum class Mode { PerMetric, PerLayer };
  explicit SmallMultiplesView(LabModel* model, QWidget* parent = nullptr);
  void setMode(Mode mode);
  Mode mode() const;
  // The panels drawn, in grid order: a series' name ("loss", "test_accuracy") or "layer ℓ".
  const QStringList& panels() const { return panels_; }
  // The grid's columns (the rows follow).
  int columns() const { return columns_; }
  // What the grid leaves out ("2 curves in another unit than squared error left out …"); "" when nothing.
  QString note() const;
  CsvTable table() const override;

  // The window of small multiples that `owner` (a training-curves view) opens with its "Grid…" button: made on first
  // use as a window of its own, owned by `owner`, redrawn as the lab's runs change; shown and raised.
  static SmallMultiplesView* showFor(QWidget* owner, LabModel* model);

 protected:
  void rebuild() override;
  QString readout(QCPAxisRect* rect, double x, double y) const override;

 private:
  struct Curve {
    const RunData* run = nullptr;
    int panel = 0;
    QVector<double> steps, values;
  };
  // The curves of every panel: per metric, each run's series (a loss only in the selected run's unit); per layer,
  // each layerwise run's fₗ at each evaluation (runs of the selected run's task).
  QVector<Curve> curvesFor(QStringList& panels, QStringList& notes) const;
  // Lays the panels out in `count` axis rects, as square a grid as the view's shape allows.
  void layOut(int count);

  QComboBox* mode_ = nullptr;
  ElidedLabel* note_ = nullptr;
  QCPLayoutGrid* grid_ = nullptr;
  QVector<QCPAxisRect*> rects_;
  QStringList panels_;
  QVector<Curve> curves_;
  int columns_ = 1;
};

}  // namespace descentlab::widgets
