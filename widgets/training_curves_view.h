#pragma once

#include <QVector>

#include "widgets/lab_model.h"
#include "widgets/plot_view.h"

class QCheckBox;
class QComboBox;
class QLabel;
class QSlider;

namespace descentlab::widgets {

class ElidedLabel;
class RunData;

// The run's epoch at each of `steps`, read from its "epoch" series (between rows linearly); empty without one.
QVector<double> epochsAt(const RunData& run, const QVector<double>& steps);

// One run's curve as the view draws it, and as its CSV export writes it.
struct DrawnCurve {
  const RunData* run = nullptr;
  QString series;  // the scalar's name ("loss", "test_accuracy")
  QVector<double> steps;
  QVector<double> x;         // what the x axis shows: the steps, or seconds (wall clock or since the run's start)
  QVector<double> raw;       // NaN where log y cannot draw a value (≤ 0)
  QVector<double> smoothed;  // TensorBoard's debiased EMA of raw; raw itself at smoothing 0 or when not smoothable
  bool smoothable = true;    // a noisy interval mean (the metric vocabulary's smoothable); evaluations are not
  int hiddenByLogY = 0;      // points log y cannot draw
  QString sameAs;            // an earlier run whose curve is identical so far, if any
  int duplicateRank = 0;     // 0 for a distinct curve; 1, 2… for the runs that repeat an earlier one
};

// Training curves: a scalar metric against step for every run, raw (faint) and smoothed (TensorBoard's debiased
// exponential moving average, at any length), with a log-y toggle. Hover lists every visible run's value at the
// nearest step; a legend click hides a run; runs whose curves coincide are drawn dashed and named in the legend.
class TrainingCurvesView : public PlotView {
  Q_OBJECT

 public:
  // `defaultMetric` is a scalar name ("loss") or "@test" for each run's test metric.
  TrainingCurvesView(LabModel* model, const QString& title, const QString& defaultMetric, QWidget* parent = nullptr);
  CsvTable table() const override;
  void setMetric(const QString& metric);
  QString wantedMetric() const { return wanted_; }
  void setSmoothing(double weight);
  void setLogY(bool on);
  // The x axis: step, wall-clock time (seconds since the Unix epoch, drawn as a date-time), the time since each
  // run's first row (which puts runs started at different times side by side), the epoch (each run's "epoch" series
  // read at each step: runs of different batch sizes or dataset sizes side by side), or the step on a log scale.
  enum class XAxis { Step, WallTime, RelativeTime, Epoch, LogStep };
  void setXAxis(XAxis axis);
  XAxis xAxis() const;
  // Every run's curve of the chosen series, hidden runs included (their `run->visible` is false), but only the runs
  // whose values are in the selected run's unit (axisUnitOf): in "test metric" mode its metric (accuracy, RMSE,
  // perplexity); for a loss, squared error or cross-entropy. Units never share the axis; the others are named.
  QVector<DrawnCurve> curves() const;
  // Grouped (LabModel::grouped()): each group's band over its members' curves of the chosen series, unsmoothed. The
  // view draws these instead of runs, by step, smoothed as runs are.
  QVector<GroupBand> groupBands() const;
  // "hides 3 points ≤ 0" under log y when some are; empty otherwise.
  QString logYNote() const;
  // "Branch from here" (issue 55): the run whose curve passes nearest `pos` (within a few pixels; a run with a run
  // file, not a group) and the step under `pos`, on the step axes. False when there is none.
  bool branchTargetAt(const QPoint& pos, QString* runId, qint64* step) const;

 signals:
  // A right-click on a run's curve at `step`, "Branch from here" chosen.
  void branchFromHereRequested(const QString& runId, qint64 step);

 protected:
  // The "Branch from here" menu at `pos` of the plot (a right-click), when a run's curve passes there.
  void offerBranchAt(const QPoint& pos);
  // A branch's line from its parent's point at the branch step, with a marker there (when the parent is drawn too).
  void drawBranchJoin(const DrawnCurve& child, const QVector<DrawnCurve>& all);
  void rebuild() override;
  QString readout(QCPAxisRect* rect, double x, double y) const override;
  QString hoverTable(QCPAxisRect* rect, double x, double y) const override;

 private:
  QString scalarFor(const RunData& run) const;
  // In the "test metric" mode: the one series drawn (the selected run's metric, else the first run's).
  // What a run's value of the chosen series is measured in, where runs differ: for "test metric" the metric's series
  // ("test_rmse"); for a loss ("loss", "test_loss", "lagrangian") its unit, squared error for a regression (video,
  // RMSE) run and cross-entropy in nats otherwise; "" where every run's values share one unit.
  QString axisUnitOf(const RunData& run) const;
  // The unit the axis shows: the selected run's, else the first drawable run's (units never share an axis).
  QString shownAxisUnit() const;
  // What the axis leaves out, said beside it: the runs in other units, the runs without an epoch series (by epoch).
  QStringList axisNotes(const QString& shownUnit) const;
  void updateMetricChoices();
  // Draws the groups; returns how many were drawn. Notes (a shortened band) go to `notes`.
  int drawGroups(QStringList& notes, bool& anySmoothable);
  QStringList groupReadout(double x) const;
  QString groupHoverTable(double x) const;
  CsvTable groupTable() const;

  QComboBox* metric_ = nullptr;
  QSlider* smoothing_ = nullptr;
  QLabel* smoothingLabel_ = nullptr;
  QCheckBox* logY_ = nullptr;
  QComboBox* xAxis_ = nullptr;
  ElidedLabel* logYNote_ = nullptr;
  QString wanted_;
};

}  // namespace descentlab::widgets
