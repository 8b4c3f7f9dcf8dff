#pragma once
// Runs tasks on the GUI thread, in the order worker threads post them. Each task waits in a queue under a
// std::mutex, and a queued call by name, which carries no data of ours, wakes the GUI thread to run one. So the
// hand-over is ordered by a lock of ours, which ThreadSanitizer sees, and not only by Qt's internal one, which it
// cannot see in Debian's uninstrumented Qt (scripts/sanitize.sh tsan). Tasks still queued when the queue is
// destroyed are dropped with it.

#include <QObject>

#include <deque>
#include <functional>
#include <mutex>

namespace descentlab::gui {

class GuiTaskQueue : public QObject {
  Q_OBJECT

 public:
  using QObject::QObject;
  // From any thread: `task` runs on this object's thread, after what was posted before it.
  void post(std::function<void()> task);

 private:
  // One task per queued call, so that each runs where its own queued call would have run.
  Q_INVOKABLE void runOne();
  std::mutex mutex_;
  std::deque<std::function<void()>> tasks_;
};

}  // namespace descentlab::gui
