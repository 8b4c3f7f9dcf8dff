#pragma once
// Pause, resume and stop for a training run, honoured between batches. Atomic flags only: no thread is ever
// terminated, and the GUI thread never waits on training.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "core/record/events.h"

namespace descentlab::session {

class TrainingControl {
 public:
  void pause() { paused_.store(true); }
  void resume() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      paused_.store(false);
    }
    wake_.notify_all();
  }
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopped_.store(true);
    }
    wake_.notify_all();
  }
  bool paused() const { return paused_.load(); }
  bool stopped() const { return stopped_.load(); }
  // True while the trainer is actually held between batches: after pause(), the batch in flight has finished and
  // emitted its events. What a caller waits on instead of guessing how long a batch takes.
  bool holding() const { return holding_.load(); }

  // Lets `batches` more batches run, then stops the run as stop() does (a step budget such as --max-steps, exact
  // to the step: the trainer asks proceed() once before each batch). Negative: no limit (the default).
  void limit_batches(int64_t batches) { batches_left_.store(batches); }

  // Asks the trainer to keep its state as it is now, between batches (while paused, at once; while running, before
  // the next batch), as a checkpoint of its own step: what a branch of a live run continues (issue 55). `done` is
  // called on the training thread with the step kept, or with an error (then the step is -1); a run that ends first
  // calls it with "the run ended before its state was kept".
  using KeepDone = std::function<void(int64_t step, const std::string& error)>;
  void keep_state(KeepDone done) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      keep_requests_.push_back(std::move(done));
    }
    wake_.notify_all();
  }
  // How the trainer keeps its state for keep_state: returns the step kept; throws on failure.
  using Keeper = std::function<int64_t()>;

  // Called by the trainer before each batch: serves keep_state requests with `keeper`, blocks while paused (serving
  // them as they come); returns false when the run should stop.
  bool proceed(const Keeper& keeper = nullptr) {
    serve_keep_requests(keeper);
    if (paused_.load()) {
      const auto held_from = std::chrono::steady_clock::now();
      std::unique_lock<std::mutex> lock(mutex_);
      holding_.store(true);
      for (;;) {
        wake_.wait(lock, [this] { return !paused_.load() || stopped_.load() || !keep_requests_.empty(); });
        if (keep_requests_.empty()) break;
        lock.unlock();
        serve_keep_requests(keeper);
        lock.lock();
      }
      holding_.store(false);
      held_ns_.fetch_add(
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - held_from).count());
    }
    if (stopped_.load()) return false;
    if (batches_left_.load() == 0) {
      stop();
      return false;
    }
    if (batches_left_.load() > 0) batches_left_.fetch_sub(1);
    return true;
  }
  // Seconds the trainer has been held by pauses so far: speeds and run times count running time only.
  double held_seconds() const { return static_cast<double>(held_ns_.load()) * 1e-9; }

  // The requests left when the run ends: each told the run ended (the trainer's last act, and the session's).
  void refuse_keep_requests(const std::string& why) {
    std::deque<KeepDone> left;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      left.swap(keep_requests_);
    }
    for (auto& done : left) done(-1, why);
  }

 private:
  void serve_keep_requests(const Keeper& keeper) {
    std::deque<KeepDone> requests;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      requests.swap(keep_requests_);
    }
    if (requests.empty()) return;
    int64_t step = -1;
    std::string error;
    if (!keeper) {
      error = "this run cannot keep its state now";
    } else {
      try {
        step = keeper();
      } catch (const std::exception& failure) {
        error = failure.what();
      }
    }
    for (auto& done : requests) done(error.empty() ? step : -1, error);
  }

  std::deque<KeepDone> keep_requests_;
  std::atomic<bool> paused_{false};
  std::atomic<bool> stopped_{false};
  std::atomic<bool> holding_{false};
  std::atomic<int64_t> held_ns_{0};
  std::atomic<int64_t> batches_left_{-1};
  std::mutex mutex_;
  std::condition_variable wake_;
};

// A sink that stops the run once a reported step reaches `limit` (0: no limit), like a user pressing Stop: the
// trainer honours it before the next batch and keeps its state as "latest", so the run can be resumed. Steps are
// reported at metric intervals and epoch ends, so the run stops at the first of those at or after `limit`; for an
// exact step use TrainingControl::limit_batches (TrainingSession::set_step_limit, descentlab-cli --max-steps).
class StepBudget : public record::MetricSink {
 public:
  StepBudget(TrainingControl& control, int64_t limit) : control_(control), limit_(limit) {}
  void scalar(const std::string&, int64_t step, double, double) override {
    if (limit_ > 0 && step >= limit_) control_.stop();
  }
  void vector(const std::string&, int64_t, double, const std::vector<double>&) override {}
  void histogram(const record::HistogramSnapshot&) override {}
  void sweep(const record::SweepResult&) override {}

 private:
  TrainingControl& control_;
  int64_t limit_;
};

}  // namespace descentlab::session
