#pragma once
// Metric sinks for trainer tests: one that stops a run like a user pressing Stop, one that records every event.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/record/events.h"
#include "core/session/control.h"

namespace descentlab::testing {

// Stops the run after `limit` steps (the trainer honours it before the next batch).
using StopAfter = session::StepBudget;

// Keeps every scalar and vector event as (step, value) per name, and every histogram.
class RecordingSink : public record::MetricSink {
 public:
  void scalar(const std::string& name, int64_t step, double, double value) override {
    scalars[name].emplace_back(step, value);
  }
  void vector(const std::string& name, int64_t step, double, const std::vector<double>& values) override {
    vectors[name].emplace_back(step, values);
  }
  void histogram(const record::HistogramSnapshot& snapshot) override { histograms.push_back(snapshot); }
  void sweep(const record::SweepResult& sweep) override { sweeps.push_back(sweep); }

  std::map<std::string, std::vector<std::pair<int64_t, double>>> scalars;
  std::map<std::string, std::vector<std::pair<int64_t, std::vector<double>>>> vectors;
  std::vector<record::HistogramSnapshot> histograms;
  std::vector<record::SweepResult> sweeps;
};

}  // namespace descentlab::testing
