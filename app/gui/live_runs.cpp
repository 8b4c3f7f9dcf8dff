#include "app/gui/live_runs.h"

#include "app/gui/run_conversion.h"
#include "core/record/checkpoint.h"
#include "core/store/run_reader.h"

#include <QDateTime>
#include <QDir>
#include <QFileInfo>

#include <chrono>
#include <exception>
#include <utility>

#include "widgets/lab_model.h"
#include "widgets/session_memory.h"

namespace descentlab::gui {
namespace {

qint64 now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

LiveRuns::LiveRuns(widgets::MainWindow& window, QString runsDirectory, QObject* parent)
    : QObject(parent), window_(window), model_(*window.model()), runsDirectory_(std::move(runsDirectory)) {
  coalesce_.setSingleShot(true);
  coalesce_.setTimerType(Qt::PreciseTimer);
  connect(&coalesce_, &QTimer::timeout, this, &LiveRuns::drain);
}

LiveRuns::~LiveRuns() {
  waiting_.clear();
  for (auto& [id, live] : live_) live.session->stop();
  for (auto& [id, live] : live_) live.session->join();
}

QString LiveRuns::start(config::ExperimentConfig config, const QString& runName) {
  if (!QDir().mkpath(runsDirectory_)) {
    window_.showError(QStringLiteral("cannot create the runs folder %1").arg(runsDirectory_));
    return {};
  }
  const QString path = newRunPath(runName.isEmpty() ? QString::fromStdString(config.name) : runName);
  auto run = std::make_unique<widgets::RunData>();
  run->name = runName.isEmpty() ? QString::fromStdString(config.name) : runName;
  run->path = QFileInfo(path).absoluteFilePath();
  describe_config(*run, config);
  run->state = widgets::RunState::Starting;
  run->appendLog(QStringLiteral("%1 starting %2 into %3").arg(widgets::LabModel::timestamp(), run->name, run->path));
  const widgets::RunData* added = model_.addRun(std::move(run));
  model_.setFocusRun(added->id);                  // the run just started is the one the controls and views follow
  window_.session()->addRecentFile(added->path);  // File > Open recent finds it after a quit, as any opened file
  session::SessionOptions options;
  options.run_path = path.toStdString();
  const QString id = added->id;
  launch(id, std::make_unique<session::TrainingSession>(std::move(config), options));
  return id;
}

QString LiveRuns::newRunPath(const QString& name) const {
  // A name is a file name here: a tour's "descent-breaks ERM" becomes descent-breaks-ERM-<time>.h5.
  QString fileName = name;
  fileName.replace(QLatin1Char(' '), QLatin1Char('-')).replace(QLatin1Char('/'), QLatin1Char('-'));
  const QString stem =
      QStringLiteral("%1-%2").arg(fileName, QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmmss")));
  QString path = QDir(runsDirectory_).filePath(stem + QStringLiteral(".h5"));
  for (int suffix = 2; QFileInfo::exists(path); ++suffix) {
    path = QDir(runsDirectory_).filePath(QStringLiteral("%1-%2.h5").arg(stem).arg(suffix));
  }
  return path;
}

QString LiveRuns::branch(const QString& parentPath, const QString& parentName, int64_t step,
                         config::ExperimentConfig config) {
  if (!QDir().mkpath(runsDirectory_)) {
    window_.showError(QStringLiteral("cannot create the runs folder %1").arg(runsDirectory_));
    return {};
  }
  const QString path = newRunPath(QFileInfo(parentPath).completeBaseName() + QStringLiteral("-branch"));
  session::SessionOptions options;
  options.run_path = path.toStdString();
  std::unique_ptr<session::TrainingSession> session;
  try {
    session = session::TrainingSession::branch(parentPath.toStdString(), step, std::move(config), options);
  } catch (const std::exception& error) {
    window_.showError(QStringLiteral("Cannot branch %1: %2").arg(parentName, QString::fromUtf8(error.what())));
    return {};
  }
  auto run = std::make_unique<widgets::RunData>();
  run->path = QFileInfo(path).absoluteFilePath();
  describe_config(*run, session->config());
  run->branchChanges = QString::fromStdString(session->branch_changes());
  run->branchStep = step;
  run->branchParent = QFileInfo(parentPath).absoluteFilePath();
  run->name = parentName + widgets::branchSuffix(run->branchChanges, step);
  run->state = widgets::RunState::Starting;
  run->appendLog(
      QStringLiteral("%1 branching %2 at step %3 into %4: %5")
          .arg(widgets::LabModel::timestamp(), parentPath)
          .arg(step)
          .arg(run->path, run->branchChanges.isEmpty() ? QStringLiteral("nothing changed") : run->branchChanges));
  for (const auto& note : session->branch_notes()) run->appendLog(QString::fromStdString(note));
  const widgets::RunData* added = model_.addRun(std::move(run));
  model_.setFocusRun(added->id);
  window_.session()->addRecentFile(added->path);
  const QString id = added->id;
  launch(id, std::move(session));
  return id;
}

void LiveRuns::keepState(const QString& runId, std::function<void(int64_t step)> then) {
  const auto found = live_.find(runId);
  if (found == live_.end()) {
    window_.showError(QStringLiteral("the run is not training here"), runId);
    then(-1);
    return;
  }
  found->second.session->keep_state([this, runId, then](int64_t step, const std::string& error) {
    posted_.post([this, runId, then, step, error] {
      if (step < 0)
        window_.showError(QStringLiteral("Cannot keep the run's state: %1").arg(QString::fromStdString(error)), runId);
      else
        model_.logToRun(
            runId,
            QStringLiteral("%1 state kept at step %2 for a branch").arg(widgets::LabModel::timestamp()).arg(step));
      then(step);
    });
  });
}

QStringList LiveRuns::queue(std::vector<Waiting> runs) {
  for (auto& run : runs) waiting_.push_back(std::move(run));
  return startWaiting();
}

QStringList LiveRuns::startWaiting() {
  QStringList started;
  while (!waiting_.empty() && count() < kAtOnce) {
    Waiting next = std::move(waiting_.front());
    waiting_.pop_front();
    const QString id = start(std::move(next.config), next.name);
    if (id.isEmpty()) {  // its error is shown; the runs after it would fail the same way
      waiting_.clear();
      break;
    }
    started << id;
  }
  return started;
}

void LiveRuns::launch(const QString& runId, std::unique_ptr<session::TrainingSession> session) {
  LiveRun live;
  // Called on the training thread, at most once per drained batch: one queued call, nothing else.
  live.buffer = std::make_unique<session::StagingBuffer>([this] {
    const qint64 woken = now_ns();
    posted_.post([this, woken] { scheduleDrain(woken); });
  });
  session->add_sink(live.buffer.get());
  session->on_start([this, runId](const session::SessionStart& start) {
    posted_.post([this, runId, start] { onStarted(runId, start); });
  });
  // Rows held in memory while the disk refuses them, and when they land: in the run's log and the message bar.
  session->on_notice([this, runId](const std::string& message) {
    posted_.post([this, runId, message] {
      const QString text = QString::fromStdString(message);
      model_.logToRun(runId, text);
      window_.showInfo(text);
    });
  });
  auto* raw = session.get();
  live.session = std::move(session);
  live_[runId] = std::move(live);
  raw->start([this, runId](const session::TrainingResult& result, const std::string& error) {
    posted_.post([this, runId, result, error] { onFinished(runId, result, QString::fromStdString(error)); });
  });
  model_.markChanged();  // its controls: it is live now
}

void LiveRuns::scheduleDrain(qint64 wokenAtNs) {
  if (firstWakeNs_ < 0) firstWakeNs_ = wokenAtNs;
  if (!coalesce_.isActive()) coalesce_.start(kCoalesceMs);
}

void LiveRuns::drain() {
  for (auto& [id, live] : live_) {
    session::MetricBatch batch = live.buffer->take();
    if (batch.empty()) continue;
    model_.changeRun(id, [&batch](widgets::RunData& run) { apply_batch(run, batch); });
  }
  if (firstWakeNs_ >= 0) {
    drainDelays_.push_back(static_cast<double>(now_ns() - firstWakeNs_) / 1e6);
    firstWakeNs_ = -1;
  }
  ++drains_;
}

void LiveRuns::onStarted(const QString& runId, const session::SessionStart& start) {
  const bool known = model_.changeRun(runId, [&start](widgets::RunData& run) {
    run.totalSteps = start.total_steps;
    run.firstStep = start.first_step;
    run.currentStep = start.first_step;
    run.description = QString::fromStdString(start.description);
    run.device = QString::fromStdString(start.device);
    run.metric = QString::fromStdString(start.metric);
    if (start.first_step > 0) run.truncateAfter(start.first_step);
    if (run.state == widgets::RunState::Starting) run.state = widgets::RunState::Running;
    run.appendLog(QStringLiteral("%1 %2 on %3, %4 steps%5")
                      .arg(widgets::LabModel::timestamp(), run.description, run.device)
                      .arg(start.total_steps)
                      .arg(start.first_step <= 0 ? QString()
                           : run.branchStep == start.first_step && run.currentStep <= start.first_step
                               ? QStringLiteral(" (branched at step %1)").arg(start.first_step)
                               : QStringLiteral(" (resumed at step %1)").arg(start.first_step)));
  });
  if (known) window_.clearErrorOf(runId);  // an earlier failure of this run (a held lock, say) no longer applies
}

void LiveRuns::onFinished(const QString& runId, const session::TrainingResult& result, const QString& error) {
  auto found = live_.find(runId);
  if (found != live_.end()) {
    // The last events, then the thread (it has returned from its work; join is immediate).
    const session::MetricBatch last = found->second.buffer->take();
    model_.changeRun(runId, [&last](widgets::RunData& run) { apply_batch(run, last); });
    found->second.session->join();
    live_.erase(found);
  }
  if (!error.isEmpty()) {
    model_.changeRun(runId, [&error](widgets::RunData& run) {
      run.state = widgets::RunState::Failed;
      run.error = error;
      // Resume can continue from the last epoch's checkpoint, if the run got that far (a full disk, once freed).
      try {
        run.hasLatestCheckpoint =
            store::RunReader(run.path.toStdString()).has_checkpoint(record::checkpoint_label::kLatest);
      } catch (const std::exception&) {
        run.hasLatestCheckpoint = false;
      }
    });
    if (const auto* run = model_.run(runId)) {
      window_.showError(
          QStringLiteral("%1: %2 (everything committed so far stays in %3)").arg(run->name, error, run->path), runId);
    }
  } else {
    model_.changeRun(runId, [&result](widgets::RunData& run) {
      run.state = result.stopped ? widgets::RunState::Stopped : widgets::RunState::Finished;
      run.hasLatestCheckpoint = result.stopped;  // a stop always writes "latest" (Trainer::run)
      run.finalStepsPerSecond = result.steps_per_second;
      if (!result.stopped) run.currentStep = run.totalSteps = result.steps;
      // A stop before the first evaluation has no test numbers: it says so instead of printing a 0.
      const QString test = result.evaluated ? QStringLiteral("test %1 %2, loss %3")
                                                  .arg(QString::fromStdString(result.metric))
                                                  .arg(result.test_metric, 0, 'g', 5)
                                                  .arg(result.test_loss, 0, 'g', 5)
                                            : QStringLiteral("not evaluated yet");
      run.appendLog(QStringLiteral("%1 %2 at step %3 after %4 s of training (%5 steps/s); %6")
                        .arg(widgets::LabModel::timestamp(),
                             result.stopped ? QStringLiteral("stopped") : QStringLiteral("finished"))
                        .arg(result.steps)
                        .arg(result.seconds, 0, 'f', 1)
                        .arg(result.steps_per_second, 0, 'f', 1)
                        .arg(test));
      if (result.stopped) run.appendLog(QStringLiteral("its state is kept as \"latest\": Resume continues it"));
    });
  }
  model_.markChanged();  // its controls, also for a run closed meanwhile
  startWaiting();        // a core is free
  emit finished(runId);
}

void LiveRuns::signalLive(const QString& runId, void (session::TrainingSession::*action)(), widgets::RunState state,
                          const QString& logText) {
  auto found = live_.find(runId);
  if (found == live_.end() || !model_.run(runId)) return;
  (found->second.session.get()->*action)();
  model_.changeRun(runId, [&](widgets::RunData& run) {
    run.state = state;
    run.restartSpeed();
    run.appendLog(QStringLiteral("%1 %2").arg(widgets::LabModel::timestamp(), logText));
  });
}

bool LiveRuns::annotate(const QString& runId, const record::RunAnnotation& annotation) {
  const auto found = live_.find(runId);
  return found != live_.end() && found->second.session && found->second.session->annotate(annotation);
}

void LiveRuns::pause(const QString& runId) {
  signalLive(runId, &session::TrainingSession::pause, widgets::RunState::Paused,
             QStringLiteral("paused (after the current batch)"));
}

void LiveRuns::resume(const QString& runId) {
  // The speed counts running time only.
  signalLive(runId, &session::TrainingSession::resume, widgets::RunState::Running, QStringLiteral("resumed"));
}

void LiveRuns::stop(const QString& runId) {
  signalLive(runId, &session::TrainingSession::stop, widgets::RunState::Stopping,
             QStringLiteral("stopping after the current batch"));
}

bool LiveRuns::resumeFromFile(const QString& runId) {
  const auto* run = model_.run(runId);
  if (!run || contains(runId)) return false;
  try {
    auto session = session::TrainingSession::resume(run->path.toStdString());
    model_.changeRun(runId, [](widgets::RunData& resumed) {
      resumed.state = widgets::RunState::Starting;
      resumed.restartSpeed();
      resumed.error.clear();
      resumed.appendLog(QStringLiteral("%1 resuming from %2").arg(widgets::LabModel::timestamp(), resumed.path));
    });
    launch(runId, std::move(session));
    return true;
  } catch (const std::exception& error) {
    window_.showError(QString::fromUtf8(error.what()), runId);
    return false;
  }
}

}  // namespace descentlab::gui
