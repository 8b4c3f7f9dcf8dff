#pragma once
// The live views. Each draws from the LabModel (every run in its own colour) when the coalescing timer refreshes
// it; none holds data of its own beyond the user's choices (metric, layer, smoothing).

#include "widgets/plot_view.h"

class QCheckBox;
class QCPColorScale;
class QComboBox;
class QLabel;
class QPushButton;
class QSlider;

namespace descentlab::widgets {

class RunData;

// Training curves: a scalar metric against step for every run, raw (faint) and smoothed (TensorBoard's debiased
// exponential moving average), with a log-y toggle.
class TrainingCurvesView : public PlotView {
  Q_OBJECT

 public:
  // `defaultMetric` is a scalar name ("loss") or "@test" for each run's test metric.
  TrainingCurvesView(LabModel* model, const QString& title, const QString& defaultMetric, QWidget* parent = nullptr);
  QString csv() const override;
  void setMetric(const QString& metric);
  void setSmoothing(double weight);
  void setLogY(bool on);

 protected:
  void rebuild() override;
  QString readout(QCPAxisRect* rect, double x, double y) const override;

 private:
  QString scalarFor(const RunData& run) const;
  void updateMetricChoices();

  QComboBox* metric_ = nullptr;
  QSlider* smoothing_ = nullptr;
  QLabel* smoothingLabel_ = nullptr;
  QCheckBox* logY_ = nullptr;
  QString wanted_;
};

// Per-layer test loss f_l against the layer index 0..L: every evaluation of the focus run from early (light) to
// late (dark), the newest bold; the newest curve of every other layerwise run dashed; a marker where descent breaks
// (f_l > f_{l-1}). Below: the share of test samples descending at each layer, as bars per run.
class LayerLossView : public PlotView {
  Q_OBJECT

 public:
  explicit LayerLossView(LabModel* model, QWidget* parent = nullptr);
  QString csv() const override;

 protected:
  void rebuild() override;
  QString readout(QCPAxisRect* rect, double x, double y) const override;

 private:
  QCPAxisRect* bars_ = nullptr;
  QCheckBox* allEvaluations_ = nullptr;
  QCheckBox* logY_ = nullptr;
};

// Lagrange multipliers λ_l (or the slack g_l, or the resilient relaxation u_l) of the focus run against step,
// one line per layer.
class LambdaView : public PlotView {
  Q_OBJECT

 public:
  explicit LambdaView(LabModel* model, QWidget* parent = nullptr);
  QString csv() const override;
  void setSeries(const QString& name);

 protected:
  void rebuild() override;

 private:
  QComboBox* series_ = nullptr;
};

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

// Robustness: the test metric against noise strength γ for every run with a sweep of the chosen noise type, the
// mean over seeds with a band of ± one standard deviation. A button sweeps the focus run's checkpoint.
class RobustnessView : public PlotView {
  Q_OBJECT

 public:
  explicit RobustnessView(LabModel* model, QWidget* parent = nullptr);
  QString csv() const override;
  void setSweepRunning(bool running);

 signals:
  void sweepRequested(const QString& runId, const QString& noise);

 protected:
  void rebuild() override;

 private:
  QComboBox* noise_ = nullptr;
  QPushButton* run_ = nullptr;
};

}  // namespace descentlab::widgets
