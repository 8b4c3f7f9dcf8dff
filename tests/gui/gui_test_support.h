#pragma once
// What the GUI test binaries share: waiting on a condition with a deadline, never for a fixed time.

#include <QApplication>
#include <QElapsedTimer>

#include <chrono>
#include <functional>
#include <thread>

namespace descentlab::testing {

// Polls `done` with events processed, until it holds or `timeoutMs` passes.
inline bool waitUntil(const std::function<bool()>& done, int timeoutMs) {
  QElapsedTimer clock;
  clock.start();
  while (!done()) {
    if (clock.elapsed() > timeoutMs) return false;
    QApplication::processEvents(QEventLoop::AllEvents, 20);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

}  // namespace descentlab::testing
