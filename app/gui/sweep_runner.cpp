#include "app/gui/sweep_runner.h"

#include "app/gui/run_conversion.h"

#include "widgets/lab_model.h"
#include "widgets/plot_helpers.h"
#include "widgets/views.h"

namespace descentlab::gui {

SweepRunner::SweepRunner(widgets::MainWindow& window, QObject* parent)
    : QObject(parent), window_(window), model_(*window.model()) {}

SweepRunner::~SweepRunner() {
  if (sweep_) {
    sweep_->cancel();  // honoured after the current cell
    sweep_->join();
  }
}

void SweepRunner::sweep(const QString& runId, const widgets::SweepChoice& choice) {
  const auto* run = model_.run(runId);
  if (!run) return;
  if (sweep_) {
    const auto* other = model_.run(sweepRunId_);
    window_.showInfo(QStringLiteral("A sweep of %1 is under way: wait for it or cancel it first.")
                         .arg(other ? other->name : QStringLiteral("another run")));
    return;
  }
  if (run->isActive()) {
    window_.showInfo(QStringLiteral("%1 is still training: sweep it once it has finished or stopped.").arg(run->name));
    return;
  }
  if (run->state == widgets::RunState::Watching) {
    window_.showInfo(
        QStringLiteral("%1 is being written by another process: sweep it once that run has finished or stopped.")
            .arg(run->name));
    return;
  }
  if (!widgets::sweepable(run)) {
    window_.showInfo(QStringLiteral(
        "Robustness sweeps are for layerwise-descent runs (text-*, video-*) and runs of your own model."));
    return;
  }
  session::SweepRequest request;
  request.run_path = run->path.toStdString();
  request.noise = choice.noise.toStdString();
  request.gamma = choice.gamma.toStdString();
  request.seeds = choice.seeds;
  sweep_ = std::make_unique<session::SweepSession>(request);
  sweepRunId_ = runId;
  model_.changeRun(runId, [&choice](widgets::RunData& swept) {
    swept.sweep = widgets::SweepActivity{};
    swept.sweep.running = true;
    swept.sweep.noise = choice.noise;
    swept.appendLog(QStringLiteral("%1 sweeping %2 noise, γ %3, %4 seeds, from the latest checkpoint")
                        .arg(widgets::LabModel::timestamp(), choice.noise, choice.gamma)
                        .arg(choice.seeds));
  });
  // Called on the sweep's thread, once per cell: one queued call each.
  sweep_->on_progress([this, runId](const session::SweepProgress& progress) {
    posted_.post([this, runId, progress] {
      const auto* swept = model_.run(runId);
      if (!swept || !swept->sweep.running) return;
      model_.changeRun(runId, [&progress](widgets::RunData& run) {
        run.sweep.done = static_cast<int>(progress.done);
        run.sweep.cells = static_cast<int>(progress.cells);
        run.sweep.gammaIndex = static_cast<int>(progress.gamma_index);
        run.sweep.gammas = static_cast<int>(progress.gammas);
        run.sweep.seed = static_cast<int>(progress.seed);
        run.sweep.etaSeconds = progress.eta_seconds;
      });
    });
  });
  sweep_->start([this, runId](const record::SweepResult& result, const std::string& error, bool cancelled) {
    posted_.post([this, runId, result, error, cancelled] {
      onFinished(runId, result, QString::fromStdString(error), cancelled);
    });
  });
  window_.robustnessView()->setSweepRunning(true);
}

void SweepRunner::cancel() {
  if (!sweep_) return;
  sweep_->cancel();
  model_.logToRun(sweepRunId_, QStringLiteral("cancelling the sweep after its current cell"));
}

void SweepRunner::onFinished(const QString& runId, const record::SweepResult& result, const QString& error,
                             bool cancelled) {
  if (sweep_) sweep_->join();  // its thread has returned from its work: immediate
  sweep_.reset();
  sweepRunId_.clear();
  window_.robustnessView()->setSweepRunning(false);
  const auto* run = model_.run(runId);
  if (!run) return;
  const QString name = run->name;
  if (cancelled) {
    model_.changeRun(runId, [](widgets::RunData& swept) {
      swept.sweep = widgets::SweepActivity{};
      swept.appendLog(
          QStringLiteral("%1 sweep cancelled: the run file is as it was").arg(widgets::LabModel::timestamp()));
    });
    cancelledMessage_ = QStringLiteral("The sweep of %1 was cancelled; its run file is unchanged.").arg(name);
    window_.showInfo(cancelledMessage_);
  } else if (!error.isEmpty()) {
    model_.changeRun(runId, [](widgets::RunData& swept) { swept.sweep = widgets::SweepActivity{}; });
    window_.showError(QStringLiteral("the sweep of %1 failed: %2").arg(name, error), runId);
  } else {
    model_.changeRun(runId, [&result](widgets::RunData& swept) {
      swept.sweep = widgets::SweepActivity{};
      apply_sweep(swept, result);
      swept.appendLog(QStringLiteral("%1 sweep of %2 noise stored in the run file")
                          .arg(widgets::LabModel::timestamp(), QString::fromStdString(result.noise)));
    });
    window_.clearMessage(cancelledMessage_);  // a sweep has completed since: that notice no longer holds
  }
}

}  // namespace descentlab::gui
