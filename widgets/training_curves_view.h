#pragma once

#include "widgets/plot_view.h"

class QCheckBox;
class QComboBox;
class QLabel;
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

}  // namespace descentlab::widgets
