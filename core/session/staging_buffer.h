#pragma once
// The hand-over from a training thread to a GUI (ARCHITECTURE.md, "data flow"): a record::MetricSink that appends
// events to a batch under a mutex held only to move data, and wakes the consumer at most once per batch. The consumer
// (the GUI thread, on a 30-40 ms coalescing timer) takes the whole batch with one swap. No LibTorch, no Qt: the
// app wires `wake` to a queued signal.

#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "core/record/events.h"

namespace descentlab::session {

struct ScalarEvent {
  std::string name;
  int64_t step = 0;
  double wall_time = 0.0;
  double value = 0.0;
};

struct VectorEvent {
  std::string name;
  int64_t step = 0;
  double wall_time = 0.0;
  std::vector<double> values;
};

// Events in the order each kind arrived.
struct MetricBatch {
  std::vector<ScalarEvent> scalars;
  std::vector<VectorEvent> vectors;
  std::vector<record::HistogramSnapshot> histograms;
  std::vector<record::SweepResult> sweeps;

  bool empty() const { return scalars.empty() && vectors.empty() && histograms.empty() && sweeps.empty(); }
  size_t size() const { return scalars.size() + vectors.size() + histograms.size() + sweeps.size(); }
};

class StagingBuffer : public record::MetricSink {
 public:
  // `wake` is called (on the producing thread, outside the lock) when an event lands in an empty buffer whose
  // consumer has not been woken since its last take(): one wake per batch, however many events it holds.
  explicit StagingBuffer(std::function<void()> wake = {}) : wake_(std::move(wake)) {}

  void scalar(const std::string& name, int64_t step, double wall_time, double value) override;
  void vector(const std::string& name, int64_t step, double wall_time, const std::vector<double>& values) override;
  void histogram(const record::HistogramSnapshot& snapshot) override;
  void sweep(const record::SweepResult& sweep) override;

  // Everything received since the last take(), leaving the buffer empty.
  MetricBatch take();
  int64_t wakes() const;  // how many times `wake` was called (for tests and the latency benchmark)

 private:
  template <typename Push>
  void append(Push push);

  std::function<void()> wake_;
  mutable std::mutex mutex_;
  MetricBatch batch_;
  bool woken_ = false;
  int64_t wakes_ = 0;
};

}  // namespace descentlab::session
