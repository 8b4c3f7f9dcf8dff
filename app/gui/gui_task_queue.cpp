#include "app/gui/gui_task_queue.h"

namespace descentlab::gui {

void GuiTaskQueue::post(std::function<void()> task) {
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    tasks_.push_back(std::move(task));
  }
  QMetaObject::invokeMethod(this, "runOne", Qt::QueuedConnection);
}

void GuiTaskQueue::runOne() {
  std::function<void()> task;
  {
    const std::lock_guard<std::mutex> lock(mutex_);
    if (tasks_.empty()) return;
    task = std::move(tasks_.front());
    tasks_.pop_front();
  }
  task();
}

}  // namespace descentlab::gui
