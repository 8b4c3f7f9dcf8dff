#pragma once
// Opens a folder of run files as a study (issue 35) without holding up the window: a worker thread lists the run
// files below the folder and reads each one's entry (its header and last values, core/study), handing them to the
// Study dock in batches (every 16 runs or 100 ms). A second study cancels the first. The GUI thread only copies
// rows into the table; the hand-over is app/gui/gui_task_queue.h's.

#include <QObject>
#include <QString>

#include <atomic>
#include <functional>
#include <memory>
#include <thread>

#include "app/gui/gui_task_queue.h"
#include "app/gui/study_backend.h"
#include "widgets/main_window.h"

namespace descentlab::gui {

class StudyLoader : public QObject {
  Q_OBJECT

 public:
  explicit StudyLoader(widgets::MainWindow& window, QObject* parent = nullptr);
  ~StudyLoader() override;  // cancels a study being read and waits for its thread (within one run file's read)

  // Starts reading `folder`; the Study dock comes forward and fills as the runs are read.
  void open(const QString& folder);
  bool loading() const { return loading_; }
  int batches() const { return batches_; }

 private:
  void postToGui(std::function<void()> task);
  void cancel();

  widgets::MainWindow& window_;
  StudyBackendImpl backend_;       // the Study dock's
  StudyBackendImpl groupBackend_;  // the lab's groups in the views
  std::thread worker_;
  std::shared_ptr<std::atomic<bool>> cancelled_;
  bool loading_ = false;
  int batches_ = 0;
  int generation_ = 0;
  GuiTaskQueue posted_;
};

}  // namespace descentlab::gui
