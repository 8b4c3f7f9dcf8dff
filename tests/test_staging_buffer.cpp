// The staging buffer between a training thread and the GUI (core/session/staging_buffer.h): no lost or duplicated
// events under concurrency, one wake per batch, and a wake callback that may take() without deadlocking.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "core/session/staging_buffer.h"

namespace descentlab::train {
namespace {

TEST(StagingBuffer, OneWakePerBatchAndEventsInOrder) {
  int wakes = 0;
  session::StagingBuffer buffer([&] { ++wakes; });
  for (int i = 0; i < 1000; ++i) buffer.scalar("loss", i, 0.0, i * 0.5);
  buffer.vector("layer_loss", 1000, 0.0, {1.0, 2.0});
  buffer.histogram(record::HistogramSnapshot{"global", 1000, {0.0, 1.0}, {3}});
  buffer.sweep(record::SweepResult{});
  EXPECT_EQ(wakes, 1);
  session::MetricBatch batch = buffer.take();
  ASSERT_EQ(batch.scalars.size(), 1000u);
  EXPECT_EQ(batch.size(), 1003u);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(batch.scalars[static_cast<size_t>(i)].step, i);
  EXPECT_EQ(batch.vectors.front().values, (std::vector<double>{1.0, 2.0}));
  EXPECT_TRUE(buffer.take().empty());
  buffer.scalar("loss", 1001, 0.0, 1.0);  // the next batch wakes the consumer again
  EXPECT_EQ(wakes, 2);
  EXPECT_EQ(buffer.wakes(), 2);
}

TEST(StagingBuffer, ConcurrentProducersLoseAndDuplicateNothing) {
  constexpr int kProducers = 4;
  constexpr int kEvents = 20000;
  std::atomic<int> wakes{0};
  session::StagingBuffer buffer([&] { wakes.fetch_add(1); });
  std::atomic<int> running{kProducers};
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      const std::string name = "p" + std::to_string(p);
      for (int i = 0; i < kEvents; ++i) {
        if (i % 2) {
          buffer.scalar(name, i, 0.0, static_cast<double>(i));
        } else {
          buffer.vector(name, i, 0.0, {static_cast<double>(i), static_cast<double>(p)});
        }
      }
      running.fetch_sub(1);
    });
  }
  // The consumer drains on a short timer, as the GUI does, until the producers are done and the buffer is empty.
  std::vector<std::vector<int64_t>> seen(kProducers);
  int takes = 0;
  while (true) {
    const bool done = running.load() == 0;
    session::MetricBatch batch = buffer.take();
    ++takes;
    // Per producer, scalars and vectors interleave by step; merge them back in step order.
    std::vector<std::vector<int64_t>> steps(kProducers);
    for (const auto& event : batch.scalars)
      steps[static_cast<size_t>(std::stoi(event.name.substr(1)))].push_back(event.step);
    for (const auto& event : batch.vectors)
      steps[static_cast<size_t>(std::stoi(event.name.substr(1)))].push_back(event.step);
    for (int p = 0; p < kProducers; ++p) {
      std::sort(steps[static_cast<size_t>(p)].begin(), steps[static_cast<size_t>(p)].end());
      seen[static_cast<size_t>(p)].insert(seen[static_cast<size_t>(p)].end(), steps[static_cast<size_t>(p)].begin(),
                                          steps[static_cast<size_t>(p)].end());
    }
    if (done && batch.empty()) break;
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  for (auto& thread : producers) thread.join();
  for (int p = 0; p < kProducers; ++p) {
    const auto& steps = seen[static_cast<size_t>(p)];
    ASSERT_EQ(steps.size(), static_cast<size_t>(kEvents)) << "producer " << p;
    for (int i = 0; i < kEvents; ++i) ASSERT_EQ(steps[static_cast<size_t>(i)], i) << "producer " << p;
  }
  // Coalesced: at most one wake per take, far fewer than the 80,000 events.
  EXPECT_LE(wakes.load(), takes);
  EXPECT_LT(wakes.load(), kProducers * kEvents / 10);
}

TEST(StagingBuffer, TheWakeCallbackRunsOutsideTheLock) {
  // A consumer that drains right inside the wake callback (a direct connection) must not deadlock.
  session::StagingBuffer* self = nullptr;
  size_t drained = 0;
  session::StagingBuffer buffer([&] { drained += self->take().size(); });
  self = &buffer;
  for (int i = 0; i < 10; ++i) buffer.scalar("loss", i, 0.0, 1.0);
  EXPECT_EQ(drained, 10u);  // each event found an empty, un-woken buffer after the previous drain
  EXPECT_EQ(buffer.wakes(), 10);
}

}  // namespace
}  // namespace descentlab::train
