#pragma once
// The bridge between the engine and the window. Each run started from the window trains in a TrainingSession on
// its own worker thread, writing its run file as it goes; its events land in a StagingBuffer whose wake posts one
// queued call to this object, which starts a single-shot coalescing timer (35 ms). When it fires, every buffer is
// taken with one swap, copied into the views' data, and the views redraw once. The GUI thread never waits on
// training: pause and stop are atomic flags honoured between batches. Robustness sweeps run the same way, on a
// worker thread of their own (one at a time), with progress per (γ, seed) cell and cancel between cells.

#include "core/config/tours.h"
#include "core/store/run_follower.h"
#include "core/train/staging_buffer.h"
#include "core/train/sweep_session.h"
#include "core/train/training_session.h"

#include <QObject>
#include <QTimer>

#include <atomic>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "app/gui/gui_task_queue.h"
#include "app/gui/lab_backend.h"
#include "app/gui/study_loader.h"
#include "widgets/main_window.h"
#include "widgets/run_data.h"

namespace descentlab::gui {

class LabController : public QObject {
  Q_OBJECT

 public:
  LabController(widgets::MainWindow& window, const LabBackend& backend, QString runsDirectory,
                QObject* parent = nullptr);
  ~LabController() override;  // stops every run and waits for its thread (each stops within one batch)

  // Starts a run; returns its id, or an empty string after showing why it could not start.
  QString start(const widgets::ExperimentRequest& request);
  // Starts a tour (core/config/tours.h): each of its runs, named "<tour> <label>", then the window shows its caption
  // and brings its views forward. Returns the runs' ids (empty, after showing why, when the tour is unknown or a run
  // cannot start).
  // `adjust` changes each run's config before it starts (tests shrink the runs to a tiny size).
  QStringList startTour(const QString& name, const std::function<void(config::ExperimentConfig&)>& adjust = nullptr);
  // The `adjust` of tours started from Help > Tours (tests: the menu's own path, with runs shrunk to a tiny size).
  void setMenuTourAdjustment(std::function<void(config::ExperimentConfig&)> adjust) {
    menuTourAdjustment_ = std::move(adjust);
  }
  void pause(const QString& runId);
  void resume(const QString& runId);
  void stop(const QString& runId);
  // Opens run files into the lab; a bad file shows its error and opens nothing for that path.
  int open(const QStringList& paths);
  // The same on a worker thread, each run joining the views as it is read (a study's Draw groups: 300 runs' series
  // read on the GUI thread held it for 7 s). openingRuns() counts those not yet in.
  // `names` (when given) name the runs in the views: a study's runs by their path below its folder.
  void openInBackground(const QStringList& paths, const QStringList& names = {});
  int openingRuns() const { return openingRuns_; }
  bool save(const QString& runId, const QString& path);
  void close(const QString& runId);
  // Sweeps the run's latest checkpoint under noise on a worker thread; progress goes to the runs table.
  void sweep(const QString& runId, const widgets::SweepChoice& choice);
  // Stops the sweep after its current cell; nothing of it is written.
  void cancelSweep();

  // Folders of run files opened as a study (the Study dock): File > Open folder, a dropped folder, `descentlab DIR`.
  StudyLoader& studies() { return studies_; }

  int activeRuns() const;
  // Seeds started as a group from the experiment panel ("seeds: 0,1,2"): kSeedsAtOnce train at a time (the lab's two
  // cores), the others wait here and start as those end.
  static constexpr int kSeedsAtOnce = 2;
  int waitingSeeds() const { return static_cast<int>(waitingSeeds_.size()); }
  // Opened run files that another process is writing: a CLI run, or rank 0 of a data-parallel one. Every kFollowMs
  // the window looks at each such file (its inode, size and time: the writer commits by renaming a new version over
  // it) and at its lock. When either changed, a worker thread reads the file again and the views take the new record
  // whole. Once the writer has let go, the run takes the state its file shows: finished, or stopped with "latest",
  // which Resume then continues here, in this process, whatever number of processes wrote it.
  int watchedRuns() const { return static_cast<int>(watched_.size()); }
  static constexpr int kFollowMs = 1000;
  bool sweepRunning() const { return sweep_ != nullptr; }
  int drains() const { return drains_; }
  // The GUI thread's delay between a wake and its drain, per drain (for the latency benchmark), in ms.
  const std::vector<double>& drainDelays() const { return drainDelays_; }
  static constexpr int kCoalesceMs = 35;
  // What a run file says of a writer that ended without closing it (its lock file left with no live holder: killed,
  // crashed, its machine gone): where Resume continues and how many steps are lost. "" when nothing was interrupted.
  static QString describeInterruption(const QString& path, const widgets::RunData& run);

 signals:
  void runFinished(const QString& runId);

 private:
  struct LiveRun {
    std::unique_ptr<train::StagingBuffer> buffer;
    std::unique_ptr<train::TrainingSession> session;
  };
  // Runs `task` on the GUI thread, after what was posted before it (app/gui/gui_task_queue.h). Worker threads hand
  // everything over through here.
  void postToGui(std::function<void()> task);
  // A run file read for the lab (any thread), then added to it (the GUI thread; false when it cannot be read or is
  // open already).
  struct OpenedFile {
    QString path, absolute, writer, error;
    std::shared_ptr<store::RunFollower> follower;
    std::unique_ptr<widgets::RunData> run;
  };
  static OpenedFile readRunFile(const QString& path);
  bool adopt(OpenedFile opened);
  // The experiment panel shows a tour's run: its preset, size and overrides.
  void showInExperimentPanel(const config::TourRun& run);
  void scheduleDrain(qint64 wokenAtNs);
  void drain();
  void launch(const QString& runId, std::unique_ptr<train::TrainingSession> session);
  // Starts a run of a validated config into a new file of the runs folder.
  // `runName` names the run in the views (the config's name when empty).
  QString startConfig(config::ExperimentConfig config, const QString& runName = QString());
  // One run per seed, drawn as a group; returns the ids of those started now.
  QStringList startSeeds(const config::ExperimentConfig& config, const QVector<int>& seeds);
  QStringList startWaitingSeeds();
  // Pause or stop a live run: the session's flag, the run's new state and a log line, then the window follows.
  void signalLive(const QString& runId, void (train::TrainingSession::*action)(), widgets::RunState state,
                  const QString& logText);
  void onStarted(const QString& runId, const train::SessionStart& start);
  void onFinished(const QString& runId, const train::TrainingResult& result, const QString& error);
  void follow();
  void onReread(const QString& runId, const std::shared_ptr<widgets::RunData>& reread, const QString& writer,
                const QString& error);
  // The rows a watched run's log gained since the last look, added to what the window shows.
  void onAppended(const QString& runId, const std::shared_ptr<store::RunBatch>& appended);

  widgets::MainWindow& window_;
  const LabBackend& backend_;
  QString runsDirectory_;
  std::map<QString, LiveRun> live_;
  struct WaitingSeed {
    config::ExperimentConfig config;
    QString name;
  };
  std::deque<WaitingSeed> waitingSeeds_;
  std::thread opener_;
  std::shared_ptr<std::atomic<bool>> stopOpening_ = std::make_shared<std::atomic<bool>>(false);
  int openingRuns_ = 0;
  QTimer coalesce_;
  void onSweepFinished(const QString& runId, const record::SweepResult& result, const QString& error, bool cancelled);
  std::unique_ptr<train::SweepSession> sweep_;
  QString sweepRunId_;
  QString cancelledSweepMessage_;  // the banner's notice of the last cancelled sweep, hidden when a sweep completes
  int drains_ = 0;
  qint64 firstWakeNs_ = -1;
  std::vector<double> drainDelays_;
  struct WatchedFile {
    // Reads what the writer committed since the last look: the log's new records, or the file whole after a fold.
    std::shared_ptr<store::RunFollower> follower;
    bool errorLogged = false;
  };
  std::map<QString, WatchedFile> watched_;  // by run id
  QTimer follow_;
  std::thread reader_;  // reads watched files again, one pass at a time
  bool reading_ = false;
  std::function<void(config::ExperimentConfig&)> menuTourAdjustment_;
  GuiTaskQueue posted_;
  StudyLoader studies_{window_};
};

}  // namespace descentlab::gui
