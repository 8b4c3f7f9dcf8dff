#pragma once
// RunBatch: what one commit of a run file adds (internal to core/store): metric rows and histogram snapshots to
// append, sweeps and checkpoints to store (replacing any of the same name), and an optional cut of the series.
// The writer gathers events into one; the run log (core/store/run_log.h) stores its rows, sweeps and snapshots.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/record/checkpoint.h"
#include "core/record/events.h"
#include "core/record/metrics.h"
#include "core/store/run_file.h"

namespace descentlab::store {

struct RunBatch {
  struct Rows {
    record::SeriesShape shape = record::SeriesShape::Scalar;
    int64_t width = 1;
    std::vector<int64_t> steps;
    std::vector<double> wall_times;
    std::vector<double> values;
  };
  struct Snapshots {
    std::vector<double> edges;
    std::vector<int64_t> steps;
    std::vector<int64_t> counts;
  };
  std::map<std::string, Rows> metrics;
  std::map<std::string, Snapshots> histograms;
  std::map<std::string, record::SweepResult> sweeps;
  // Shared: a checkpoint saved under several labels ("best" and "latest") is one copy in memory and one write.
  std::map<std::string, std::shared_ptr<const record::CheckpointData>> checkpoints;
  std::optional<int64_t> truncate_after;
  // Checkpoints to let go (a kept step past train.keep_count / keep_megabytes): the fold leaves them out.
  std::set<std::string> dropped_checkpoints;
  // A person's new name, tags and note for the run (the whole annotation: it replaces the one before).
  std::optional<RunAnnotation> annotation;

  bool empty() const {
    return metrics.empty() && histograms.empty() && sweeps.empty() && checkpoints.empty() && !truncate_after &&
           !annotation && dropped_checkpoints.empty();
  }

  // `this` is the older batch (a commit that failed, or the log read so far); `newer` came after it. Rows and
  // snapshots are appended in order; sweeps and checkpoints of the same name are replaced.
  void merge_newer(RunBatch&& newer) {
    for (auto& [name, rows] : newer.metrics) {
      auto& into = metrics[name];
      into.shape = rows.shape;
      into.width = rows.width;
      into.steps.insert(into.steps.end(), rows.steps.begin(), rows.steps.end());
      into.wall_times.insert(into.wall_times.end(), rows.wall_times.begin(), rows.wall_times.end());
      into.values.insert(into.values.end(), rows.values.begin(), rows.values.end());
    }
    for (auto& [name, snapshots] : newer.histograms) {
      auto& into = histograms[name];
      into.edges = snapshots.edges;
      into.steps.insert(into.steps.end(), snapshots.steps.begin(), snapshots.steps.end());
      into.counts.insert(into.counts.end(), snapshots.counts.begin(), snapshots.counts.end());
    }
    for (auto& [name, sweep] : newer.sweeps) sweeps[name] = std::move(sweep);
    for (auto& [label, checkpoint] : newer.checkpoints) {
      checkpoints[label] = std::move(checkpoint);
      dropped_checkpoints.erase(label);
    }
    for (const auto& label : newer.dropped_checkpoints) {
      checkpoints.erase(label);
      dropped_checkpoints.insert(label);
    }
    if (newer.truncate_after) truncate_after = newer.truncate_after;
    if (newer.annotation) annotation = std::move(newer.annotation);
  }
};

}  // namespace descentlab::store
