#pragma once
// The runs training in this process (one concern of the lab's controller). Each run trains in a TrainingSession on
// its own worker thread, writing its run file as it goes; its events land in a StagingBuffer whose wake posts one
// queued call here, which starts a single-shot coalescing timer (35 ms). When it fires, every buffer is taken with
// one swap and copied into the model, which has the window redraw once. The GUI thread never waits on training:
// pause and stop are atomic flags honoured between batches. Runs queued as seeds wait for a free core.
// Every change to a run goes through the model (LabModel::changeRun); nothing here redraws by hand.

#include "core/config/experiment_config.h"
#include "core/session/staging_buffer.h"
#include "core/session/training_session.h"

#include <QObject>
#include <QTimer>

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "app/gui/gui_task_queue.h"
#include "widgets/main_window.h"

namespace descentlab::gui {

class LiveRuns : public QObject {
  Q_OBJECT

 public:
  LiveRuns(widgets::MainWindow& window, QString runsDirectory, QObject* parent = nullptr);
  ~LiveRuns() override;  // stops every run and waits for its thread (each stops within one batch)

  // Starts a run of a validated config into a new file of the runs folder; `runName` names it in the views (the
  // config's name when empty). Returns its id, or an empty string after showing why it could not start.
  QString start(config::ExperimentConfig config, const QString& runName = QString());

  // Starts a branch of the run file `parentPath` (issue 55): a new run of the runs folder that continues its checkpoint
  // at `step` under `config`, named "<parentName> › change @ step N". Returns its id, or "" after showing why not.
  QString branch(const QString& parentPath, const QString& parentName, int64_t step, config::ExperimentConfig config);
  // Keeps the live run's state as it is now (TrainingSession::keep_state) and then calls `then` on the GUI thread
  // with the step kept, or -1 after showing why not.
  void keepState(const QString& runId, std::function<void(int64_t step)> then);

  // Runs that start as cores come free, kAtOnce training at a time (the lab's two cores): seeds of one config, or a
  // tour's runs once per seed. Returns the ids of those started now.
  struct Waiting {
    config::ExperimentConfig config;
    QString name;
  };
  static constexpr int kAtOnce = 2;
  QStringList queue(std::vector<Waiting> runs);
  int waiting() const { return static_cast<int>(waiting_.size()); }

  bool contains(const QString& runId) const { return live_.count(runId) > 0; }
  int count() const { return static_cast<int>(live_.size()); }
  void pause(const QString& runId);
  void resume(const QString& runId);  // a paused live run
  void stop(const QString& runId);
  // Gives a person's name, tags and note to a live run's writer; false when the run is not live here or its writer
  // has closed (then the run file takes it directly). Throws RunFileError for a bad value.
  bool annotate(const QString& runId, const record::RunAnnotation& annotation);
  // Continues a stopped, failed or saved run from its run file's "latest" checkpoint; false after showing why not.
  bool resumeFromFile(const QString& runId);

  int drains() const { return drains_; }
  // The GUI thread's delay between a wake and its drain, per drain (for the latency benchmark), in ms.
  const std::vector<double>& drainDelays() const { return drainDelays_; }
  static constexpr int kCoalesceMs = 35;

 signals:
  void finished(const QString& runId);

 private:
  struct LiveRun {
    std::unique_ptr<session::StagingBuffer> buffer;
    std::unique_ptr<session::TrainingSession> session;
  };
  QStringList startWaiting();
  // A new file of the runs folder for a run named `name` ("descent-breaks-ERM-<time>.h5").
  QString newRunPath(const QString& name) const;
  void launch(const QString& runId, std::unique_ptr<session::TrainingSession> session);
  void scheduleDrain(qint64 wokenAtNs);
  void drain();
  // Pause or stop: the session's flag, the run's new state and a log line.
  void signalLive(const QString& runId, void (session::TrainingSession::*action)(), widgets::RunState state,
                  const QString& logText);
  void onStarted(const QString& runId, const session::SessionStart& start);
  void onFinished(const QString& runId, const session::TrainingResult& result, const QString& error);

  widgets::MainWindow& window_;
  widgets::LabModel& model_;
  QString runsDirectory_;
  std::map<QString, LiveRun> live_;
  std::deque<Waiting> waiting_;
  QTimer coalesce_;
  int drains_ = 0;
  qint64 firstWakeNs_ = -1;
  std::vector<double> drainDelays_;
  GuiTaskQueue posted_;  // declared last: destroyed first, dropping what the threads posted
};

}  // namespace descentlab::gui
