#pragma once
// Opened run files that another process is writing: a CLI run, or rank 0 of a data-parallel one (one concern of the
// lab's controller). Every kFollowMs the window looks at each such file (its inode, size and time: the writer commits
// by renaming a new version over it) and at its lock. When either changed, a worker thread reads what the writer
// committed (the log's new records, or the file whole after a fold) and the run takes it through the model. Once
// the writer has let go, the run takes the state its file shows: finished, or stopped with "latest", which Resume
// then continues in this process, whatever number of processes wrote it.

#include "core/store/run_batch.h"
#include "core/store/run_follower.h"

#include <QObject>
#include <QTimer>

#include <map>
#include <memory>
#include <thread>

#include "app/gui/gui_task_queue.h"
#include "widgets/main_window.h"
#include "widgets/run_data.h"

namespace descentlab::gui {

class WatchedFiles : public QObject {
  Q_OBJECT

 public:
  explicit WatchedFiles(widgets::MainWindow& window, QObject* parent = nullptr);
  ~WatchedFiles() override;  // waits for a pass under way (one read per watched file); what it posts is dropped

  // Follows the run `runId` of the model, read so far by `follower`, until its writer lets go.
  void watch(const QString& runId, std::shared_ptr<store::RunFollower> follower);
  // Stops following it (a run closed): a pass under way finds it gone and drops what it read.
  void forget(const QString& runId);
  bool contains(const QString& runId) const { return watched_.count(runId) > 0; }
  int count() const { return static_cast<int>(watched_.size()); }
  static constexpr int kFollowMs = 1000;

  // Who holds the run file's lock ("" when nobody writes it).
  static QString writerOf(const QString& path);

 private:
  void follow();
  // The rows a watched run's log gained since the last look, added to what the window shows.
  void onAppended(const QString& runId, const std::shared_ptr<store::RunBatch>& appended);
  // A followed run's name, tags and note as its file now says (`named`'s annotation fields), when they changed.
  void takeAnnotation(const QString& runId, const widgets::RunData& named);
  void onReread(const QString& runId, const std::shared_ptr<widgets::RunData>& reread, const QString& writer,
                const QString& error);

  widgets::MainWindow& window_;
  widgets::LabModel& model_;
  struct WatchedFile {
    // Reads what the writer committed since the last look: the log's new records, or the file whole after a fold.
    std::shared_ptr<store::RunFollower> follower;
    bool errorLogged = false;
  };
  std::map<QString, WatchedFile> watched_;  // by run id
  QTimer follow_;
  std::thread reader_;  // reads watched files again, one pass at a time
  bool reading_ = false;
  GuiTaskQueue posted_;
};

}  // namespace descentlab::gui
