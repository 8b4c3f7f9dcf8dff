#pragma once
// The plain-data layer at the bottom of core (docs/architecture.md): what a trainer emits while it runs. No
// LibTorch and no Qt, so the run file (core/store), the evaluation, the trainers, the GUI's conversion (app/) and
// tests all use these types. A trainer holds a list of sinks and calls each one; a sink must return quickly
// (buffer, then write elsewhere).

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace descentlab::record {

// A weight-magnitude histogram at one step: counts of |w| in fixed bins.
struct HistogramSnapshot {
  std::string name;  // "global", a layer ("blocks.3") or a tensor ("blocks.3.attn.in_proj_weight")
  int64_t step = 0;
  std::vector<double> bin_edges;  // bins + 1 edges, fixed for a given name over the whole run
  std::vector<int64_t> counts;    // bins
};

// A robustness sweep: a metric for each (strength γ, seed), and optionally the per-layer losses under noise.
struct SweepResult {
  std::string name;                // e.g. "gaussian"
  std::string noise;               // "gaussian", "uniform", "discrete", "video"
  std::string metric_name;         // "accuracy" or "rmse"
  std::vector<double> gamma;       // G strengths
  std::vector<int64_t> seeds;      // S seeds
  std::vector<double> metric;      // G x S, row-major
  int64_t layers = 0;              // L + 1 readouts (layer 0 .. L), 0 when not measured
  std::vector<double> layer_loss;  // G x S x layers, row-major
};

class MetricSink {
 public:
  virtual ~MetricSink() = default;

  // A scalar series (loss, accuracy, learning rate, throughput, ...). `wall_time` is seconds since the Unix epoch.
  virtual void scalar(const std::string& name, int64_t step, double wall_time, double value) = 0;
  // A vector series, one value per layer (layer_loss f_l, slack g_l, lambda, u, sparsity, ...). The width of a
  // given name stays the same over a run.
  virtual void vector(const std::string& name, int64_t step, double wall_time, const std::vector<double>& values) = 0;
  virtual void histogram(const HistogramSnapshot& snapshot) = 0;
  virtual void sweep(const SweepResult& sweep) = 0;
  // Makes everything received so far durable (or visible) before returning.
  virtual void flush() {}
};

// Seconds since the Unix epoch (the wall_time of events).
inline double wall_clock_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// What a trainer holds: its sinks, each event sent to all of them with one wall-time stamp.
class SinkList {
 public:
  void add(MetricSink* sink) { sinks_.push_back(sink); }
  void scalar(const std::string& name, int64_t step, double value) const {
    const double wall = wall_clock_seconds();
    for (auto* sink : sinks_) sink->scalar(name, step, wall, value);
  }
  void vector(const std::string& name, int64_t step, const std::vector<double>& values) const {
    const double wall = wall_clock_seconds();
    for (auto* sink : sinks_) sink->vector(name, step, wall, values);
  }
  void histograms(const std::vector<HistogramSnapshot>& snapshots) const {
    for (const auto& snapshot : snapshots) {
      for (auto* sink : sinks_) sink->histogram(snapshot);
    }
  }
  void flush() const {
    for (auto* sink : sinks_) sink->flush();
  }

 private:
  std::vector<MetricSink*> sinks_;
};

}  // namespace descentlab::record
