#pragma once

#include "widgets/lab_model.h"
#include "widgets/plot_view.h"
#include "widgets/run_data.h"

class QComboBox;
class QLineEdit;
class QPushButton;
class QSpinBox;

namespace descentlab::widgets {

// Robustness: the test metric against noise strength γ for every run with a sweep of the chosen noise type, the
// mean over seeds with a band of ± one standard deviation. The controls choose a sweep (noise, γ grid, seeds) of the
// selected run's checkpoint; it runs in the background with its progress in the runs table, and can be cancelled.
class RobustnessView : public PlotView {
  Q_OBJECT

 public:
  explicit RobustnessView(LabModel* model, QWidget* parent = nullptr);
  CsvTable table() const override;
  void setSweepRunning(bool running);
  // The sweep the controls describe now (noise, γ grid, seeds).
  SweepChoice sweepChoice() const;
  void setSweepChoice(const SweepChoice& choice);
  // Grouped (LabModel::grouped()): per group of the shown noise, the band over its members' curves, each member's
  // curve being its mean over noise seeds at each γ (the band's "steps" are the γ).
  QVector<GroupBand> groupBands() const;

 signals:
  void sweepRequested(const QString& runId, const SweepChoice& choice);
  void cancelSweepRequested();

 protected:
  void rebuild() override;

 private:
  void updateNoiseChoices();
  QComboBox* noise_ = nullptr;       // which stored sweeps to show
  QComboBox* sweepNoise_ = nullptr;  // the noise of the next sweep (the selected run's kinds)
  QLineEdit* gamma_ = nullptr;
  QSpinBox* seeds_ = nullptr;
  QPushButton* run_ = nullptr;
  QPushButton* cancel_ = nullptr;
};

}  // namespace descentlab::widgets
