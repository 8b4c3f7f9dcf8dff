#pragma once
// Interval metrics as meters: a sum on the device that an engine adds to at every step (no host read) and the loop
// reads once per metric interval. An engine declares a meter once (Trainer::add_meter) and adds to it in its
// train_step (Trainer::add); the loop owns the rest: it saves every meter in the checkpoint's "progress" section
// under its name and restores it (checked: this run's shape, finite values), in a data-parallel run sums it over
// ranks before each read and keeps each rank's own part in its checkpoints, emits its mean over the interval's steps
// as the series it reports (Trainer::report_meters), and clears it after each read.

#include <torch/types.h>

#include <cstdint>
#include <deque>
#include <string>
#include <utility>
#include <vector>

namespace descentlab::train {

class Meter {
 public:
  // `reported`: the metric (core/record/metrics.h) whose value at each interval is the meter's mean, a vector for a
  // sum with dimensions and a scalar otherwise; nullptr for a meter its engine reads itself.
  Meter(std::string name, torch::Tensor sum, const char* reported)
      : name_(std::move(name)), sum_(std::move(sum)), reported_(reported) {}

  const std::string& name() const { return name_; }  // its name in checkpoints ("progress"/name)
  const char* reported() const { return reported_; }
  torch::Tensor& sum() { return sum_; }
  const torch::Tensor& sum() const { return sum_; }
  // The interval's mean, read to the host (the interval's one read of this meter).
  std::vector<double> mean(int64_t steps) const {
    const torch::Tensor cpu = (sum_ / static_cast<double>(steps)).to(torch::kCPU, torch::kFloat64).contiguous();
    return std::vector<double>(cpu.data_ptr<double>(), cpu.data_ptr<double>() + cpu.numel());
  }
  void reset() { sum_.zero_(); }

 private:
  std::string name_;
  torch::Tensor sum_;
  const char* reported_;
};

// An engine's meters, in the order they were declared (the order they are reported in). A deque, so a Meter& handed
// out stays valid as more are declared.
class Meters {
 public:
  Meter& add(std::string name, torch::Tensor sum, const char* reported) {
    return meters_.emplace_back(std::move(name), std::move(sum), reported);
  }
  std::deque<Meter>& all() { return meters_; }
  const std::deque<Meter>& all() const { return meters_; }
  // Their sums by name (checkpoints, data-parallel replicas).
  std::vector<std::pair<std::string, torch::Tensor>> named_sums() const {
    std::vector<std::pair<std::string, torch::Tensor>> named;
    for (const auto& meter : meters_) named.emplace_back(meter.name(), meter.sum());
    return named;
  }

 private:
  std::deque<Meter> meters_;
};

}  // namespace descentlab::train
