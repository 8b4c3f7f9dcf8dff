#pragma once

#include "widgets/plot_view.h"

class QComboBox;
class QPushButton;

namespace descentlab::widgets {

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
