#pragma once
// Robustness sweeps started from the window (one concern of the lab's controller): one at a time, on a worker thread
// of its own, sweeping a finished run's latest checkpoint under noise, with progress per (γ, seed) cell in the runs
// table and cancel between cells. The result goes into the run file and, through the model, into the views.

#include "core/record/events.h"
#include "core/session/sweep_session.h"

#include <QObject>

#include <memory>

#include "app/gui/gui_task_queue.h"
#include "widgets/main_window.h"
#include "widgets/run_data.h"

namespace descentlab::gui {

class SweepRunner : public QObject {
  Q_OBJECT

 public:
  explicit SweepRunner(widgets::MainWindow& window, QObject* parent = nullptr);
  ~SweepRunner() override;  // cancels a sweep under way and waits for its current cell

  // Sweeps the run's latest checkpoint; a run that trains, is written elsewhere or is not a layerwise-descent run
  // is refused with the reason shown.
  void sweep(const QString& runId, const widgets::SweepChoice& choice);
  // Stops the sweep after its current cell; nothing of it is written.
  void cancel();
  bool running() const { return sweep_ != nullptr; }

 private:
  void onFinished(const QString& runId, const record::SweepResult& result, const QString& error, bool cancelled);

  widgets::MainWindow& window_;
  widgets::LabModel& model_;
  std::unique_ptr<session::SweepSession> sweep_;
  QString sweepRunId_;
  QString cancelledMessage_;  // the banner's notice of the last cancelled sweep, hidden when a sweep completes
  GuiTaskQueue posted_;
};

}  // namespace descentlab::gui
