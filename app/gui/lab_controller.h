#pragma once
// The bridge between the engine and the window: it connects the window's requests to the lab's concerns, each its
// own object — runs training here (app/gui/live_runs.h), run files another process writes (watched_files.h),
// robustness sweeps (sweep_runner.h), run files opened and saved (run_opener.h), folders opened as studies
// (study_loader.h), a missing dataset fetched (dataset_fetcher.h) — and starts tours. None of them redraws by hand:
// every change to a run goes through the window's model (LabModel::changeRun), which has the window redraw once on its
// next turn of the event loop.

#include "core/config/experiment_config.h"
#include "core/config/tours.h"

#include <QObject>

#include <functional>

#include "app/gui/dataset_fetcher.h"
#include "app/gui/lab_backend.h"
#include "app/gui/live_runs.h"
#include "app/gui/run_opener.h"
#include "app/gui/study_loader.h"
#include "app/gui/sweep_runner.h"
#include "app/gui/tour_branches.h"
#include "app/gui/watched_files.h"
#include "widgets/main_window.h"
#include "widgets/run_data.h"

namespace descentlab::gui {

class LabController : public QObject {
  Q_OBJECT

 public:
  LabController(widgets::MainWindow& window, const LabBackend& backend, QString runsDirectory,
                QObject* parent = nullptr);

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
  void pause(const QString& runId) { live_.pause(runId); }
  // A paused run goes on; a stopped or saved one continues from its run file's "latest" checkpoint.
  void resume(const QString& runId);
  void stop(const QString& runId) { live_.stop(runId); }
  int open(const QStringList& paths) { return opener_.open(paths); }
  void openInBackground(const QStringList& paths) { opener_.openInBackground(paths); }
  int openingRuns() const { return opener_.openingRuns(); }
  bool save(const QString& runId, const QString& path) { return opener_.save(runId, path); }
  void close(const QString& runId);
  // Stores a person's name, tags and note for the run in its run file (through its writer while it trains here) and
  // shows them; returns "" or the error, which the message bar also shows (a run another process writes is refused
  // naming it, a bad value naming it).
  QString annotate(const QString& runId, const widgets::RunAnnotationEdit& edit);
  // A branch of the run (issue 55) as the Branch dialog chose it: from a kept checkpoint, or from a live run's state
  // as it is now (kept first, between batches). The child's id is given to `started` once it starts ("" when it
  // could not: the message bar says why).
  void branch(const QString& runId, const widgets::BranchChoice& choice,
              std::function<void(const QString& childId)> started = nullptr);
  void sweep(const QString& runId, const widgets::SweepChoice& choice) { sweeps_.sweep(runId, choice); }
  void cancelSweep() { sweeps_.cancel(); }

  StudyLoader& studies() { return studies_; }
  DatasetFetcher& fetcher() { return fetcher_; }
  int activeRuns() const { return live_.count(); }
  static constexpr int kSeedsAtOnce = LiveRuns::kAtOnce;
  int waitingSeeds() const { return live_.waiting(); }
  int waitingBranches() const { return tourBranches_.waiting(); }  // a tour's branches not started yet
  int watchedRuns() const { return watched_.count(); }
  static constexpr int kFollowMs = WatchedFiles::kFollowMs;
  bool sweepRunning() const { return sweeps_.running(); }
  int drains() const { return live_.drains(); }
  const std::vector<double>& drainDelays() const { return live_.drainDelays(); }
  static constexpr int kCoalesceMs = LiveRuns::kCoalesceMs;
  static QString describeInterruption(const QString& path, const widgets::RunData& run) {
    return RunOpener::describeInterruption(path, run);
  }

 signals:
  void runFinished(const QString& runId);

 private:
  // One run per seed, drawn as a group; returns the ids of those started now.
  QStringList startSeeds(const config::ExperimentConfig& config, const QVector<int>& seeds);
  // The experiment panel shows a tour's run: its preset, size and overrides.
  void showInExperimentPanel(const config::TourRun& run);
  // The folder of an example's files for a tour's run (docs/your-model.md), written by its script with Debian's
  // python3-torch the first time (the window stays responsive meanwhile); "" with the error shown when that failed.
  QString exampleFiles(const std::string& example);

  widgets::MainWindow& window_;
  const LabBackend& backend_;
  std::function<void(config::ExperimentConfig&)> menuTourAdjustment_;
  // Destroyed in reverse: studies, sweeps, opened files (before the watched files they hand over), live runs.
  LiveRuns live_;
  TourBranches tourBranches_;  // a tour's branch runs, waiting for their parents' states
  WatchedFiles watched_;
  RunOpener opener_;
  SweepRunner sweeps_;
  StudyLoader studies_;
  DatasetFetcher fetcher_;
};

}  // namespace descentlab::gui
