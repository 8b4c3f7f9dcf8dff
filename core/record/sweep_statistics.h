#pragma once
// The statistics of a robustness sweep over its seeds, computed one way for `sweep`, `inspect`, `compare` and the
// window's robustness view: the mean, and the sample standard deviation (n - 1) from the deviations about the mean
// (two passes, so it never goes negative or loses digits the way the sum-of-squares formula can). Plain data, header
// only: widgets/ uses it without linking core.

#include <cmath>
#include <cstddef>
#include <vector>

#include "core/record/events.h"

namespace descentlab::record {

struct SeedStatistics {
  double mean = 0.0;
  double std = 0.0;  // 0 for fewer than two seeds
};

// Mean and sample standard deviation of `count` values starting at `values`.
inline SeedStatistics seed_statistics(const double* values, size_t count) {
  SeedStatistics out;
  if (count == 0) return out;
  for (size_t i = 0; i < count; ++i) out.mean += values[i];
  out.mean /= static_cast<double>(count);
  if (count < 2) return out;
  double squares = 0.0;
  for (size_t i = 0; i < count; ++i) squares += (values[i] - out.mean) * (values[i] - out.mean);
  out.std = std::sqrt(squares / static_cast<double>(count - 1));
  return out;
}

// One strength γ of a sweep: the metric over seeds, and the mean per-layer loss (empty when not measured).
struct SweepRow {
  double gamma = 0.0;
  SeedStatistics metric;
  std::vector<double> layer_loss_mean;
};

inline std::vector<SweepRow> sweep_statistics(const SweepResult& sweep) {
  const size_t seeds = sweep.seeds.size();
  const auto layers = static_cast<size_t>(sweep.layers > 0 ? sweep.layers : 0);
  std::vector<SweepRow> rows;
  for (size_t g = 0; g < sweep.gamma.size(); ++g) {
    SweepRow row;
    row.gamma = sweep.gamma[g];
    if (sweep.metric.size() >= (g + 1) * seeds) row.metric = seed_statistics(sweep.metric.data() + g * seeds, seeds);
    row.layer_loss_mean.assign(layers, 0.0);
    if (seeds > 0 && sweep.layer_loss.size() >= (g + 1) * seeds * layers) {
      for (size_t s = 0; s < seeds; ++s) {
        for (size_t l = 0; l < layers; ++l) row.layer_loss_mean[l] += sweep.layer_loss[(g * seeds + s) * layers + l];
      }
      for (auto& value : row.layer_loss_mean) value /= static_cast<double>(seeds);
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace descentlab::record
