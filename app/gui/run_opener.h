#pragma once
// Run files opened into the lab (one concern of the lab's controller): File > Open, the last session's runs, a
// study's Draw groups (on a worker thread), and Save as. A file another process writes is handed to WatchedFiles.

#include "core/store/run_follower.h"

#include <QObject>
#include <QStringList>

#include <atomic>
#include <memory>
#include <thread>

#include "app/gui/gui_task_queue.h"
#include "app/gui/watched_files.h"
#include "widgets/main_window.h"
#include "widgets/run_data.h"

namespace descentlab::gui {

class RunOpener : public QObject {
  Q_OBJECT

 public:
  RunOpener(widgets::MainWindow& window, WatchedFiles& watched, QObject* parent = nullptr);
  ~RunOpener() override;  // stops reading (within one run file's read); what it posted is dropped

  // Opens run files into the lab; a bad file shows its error and opens nothing for that path. Returns how many.
  int open(const QStringList& paths);
  // The same on a worker thread, the runs joining the lab in batches (a study's Draw groups: 300 runs' series read
  // on the GUI thread held it for 7 s). While runs are still to come the views wait (LabModel::runsToCome).
  // Each run is named by its config, as open() names it (LabModel::addRun).
  void openInBackground(const QStringList& paths);
  int openingRuns() const { return openingRuns_; }
  // Packs the run's latest committed version into `path` (beside it first, then renamed).
  bool save(const QString& runId, const QString& path);

  // What a run file says of a writer that ended without closing it (its lock file left with no live holder: killed,
  // crashed, its machine gone): where Resume continues and how many steps are lost. "" when nothing was interrupted.
  static QString describeInterruption(const QString& path, const widgets::RunData& run);

 private:
  // A run file read for the lab (any thread), then added to it (the GUI thread; false when it cannot be read or is
  // open already).
  struct OpenedFile {
    QString path, absolute, writer, error;
    std::shared_ptr<store::RunFollower> follower;
    std::unique_ptr<widgets::RunData> run;
  };
  static OpenedFile read(const QString& path);
  bool adopt(OpenedFile opened);

  widgets::MainWindow& window_;
  widgets::LabModel& model_;
  WatchedFiles& watched_;
  std::thread opener_;
  std::shared_ptr<std::atomic<bool>> stopOpening_ = std::make_shared<std::atomic<bool>>(false);
  int openingRuns_ = 0;
  GuiTaskQueue posted_;
};

}  // namespace descentlab::gui
