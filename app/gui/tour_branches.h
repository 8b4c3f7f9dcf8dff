#pragma once
// A tour's branch runs (issue 55; core/config/tours.h "branch_of"): each waits for its parent, found by its name in
// the lab, to keep the state at its step in its run file, then starts as a branch from there (LiveRuns::branch). A
// parent that ends without keeping that step (a run shortened below it) is branched from its latest state, with one
// epoch more than the parent had so that the branch trains, and that is said; one that fails takes its branch with
// it, said too. Checked every kPollMs while any waits.

#include "core/config/experiment_config.h"

#include <QObject>
#include <QString>
#include <QTimer>

#include <vector>

#include "app/gui/live_runs.h"
#include "widgets/main_window.h"

namespace descentlab::gui {

class TourBranches : public QObject {
  Q_OBJECT

 public:
  TourBranches(widgets::MainWindow& window, LiveRuns& live, QObject* parent = nullptr);

  // A branch of the run named `parentName` at `step`, under `config` (the lab names it "<parent> › change @ step N").
  void add(const QString& parentName, int64_t step, config::ExperimentConfig config);
  int waiting() const { return static_cast<int>(waiting_.size()); }
  static constexpr int kPollMs = 300;

 signals:
  void started(const QString& childId);

 private:
  struct Waiting {
    QString parentName;
    int64_t step = -1;
    config::ExperimentConfig config;
  };
  void poll();
  // Whether `waiting` started (or was given up, said); false while it still waits.
  bool tryStart(const Waiting& waiting);

  widgets::MainWindow& window_;
  LiveRuns& live_;
  std::vector<Waiting> waiting_;
  QTimer timer_;
};

}  // namespace descentlab::gui
