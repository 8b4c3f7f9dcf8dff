#include "core/session/staging_buffer.h"

namespace descentlab::session {

template <typename Push>
void StagingBuffer::append(Push push) {
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    push(batch_);
    if (!woken_) {
      woken_ = true;
      wake = true;
      ++wakes_;
    }
  }
  if (wake && wake_) wake_();
}

void StagingBuffer::scalar(const std::string& name, int64_t step, double wall_time, double value) {
  append([&](MetricBatch& batch) { batch.scalars.push_back({name, step, wall_time, value}); });
}

void StagingBuffer::vector(const std::string& name, int64_t step, double wall_time, const std::vector<double>& values) {
  append([&](MetricBatch& batch) { batch.vectors.push_back({name, step, wall_time, values}); });
}

void StagingBuffer::histogram(const record::HistogramSnapshot& snapshot) {
  append([&](MetricBatch& batch) { batch.histograms.push_back(snapshot); });
}

void StagingBuffer::sweep(const record::SweepResult& sweep) {
  append([&](MetricBatch& batch) { batch.sweeps.push_back(sweep); });
}

MetricBatch StagingBuffer::take() {
  MetricBatch taken;
  std::lock_guard<std::mutex> lock(mutex_);
  std::swap(taken, batch_);
  woken_ = false;
  return taken;
}

int64_t StagingBuffer::wakes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return wakes_;
}

}  // namespace descentlab::session
