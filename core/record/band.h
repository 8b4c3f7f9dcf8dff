#pragma once
// A group of runs drawn as its mean with a band (issue 35), computed one way for the CLI's study (core/study) and
// the window's views (widgets/): members' rows matched by step, over the steps every member reached. Plain data,
// header only: widgets/ uses it without linking core.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <map>
#include <vector>

#include "core/record/sweep_statistics.h"

namespace descentlab::record {

enum class BandKind { MinMax, StandardDeviation };

struct BandRows {
  std::vector<double> steps;
  std::vector<double> mean, low, high;  // rows x width, row-major
  size_t width = 1;
  size_t members = 0;        // members drawn (those with at least one row)
  bool shortened = false;    // some member has rows past the last step drawn
  double longest_step = 0;   // the last step of the longest member
  double shortest_step = 0;  // the last step of the shortest member
};

// `rows(m)` the rows of member m, `step(m, r)` its step at row r and `value(m, r, c)` its value in column c (a
// member of width 1 has c = 0). Members without rows are skipped. A member's rows are in increasing step order.
template <class Rows, class Step, class Value>
BandRows band_over(size_t members, size_t width, const Rows& rows, const Step& step, const Value& value,
                   BandKind kind) {
  BandRows band;
  band.width = std::max<size_t>(width, 1);
  std::vector<size_t> drawn;
  for (size_t m = 0; m < members; ++m) {
    if (rows(m) > 0) drawn.push_back(m);
  }
  band.members = drawn.size();
  if (drawn.empty()) return band;
  band.longest_step = step(drawn.front(), rows(drawn.front()) - 1);
  band.shortest_step = band.longest_step;
  std::vector<std::map<double, size_t>> row_of(drawn.size());
  for (size_t d = 0; d < drawn.size(); ++d) {
    const size_t m = drawn[d];
    for (size_t r = 0; r < rows(m); ++r) row_of[d][step(m, r)] = r;
    band.longest_step = std::max(band.longest_step, step(m, rows(m) - 1));
    band.shortest_step = std::min(band.shortest_step, step(m, rows(m) - 1));
  }
  std::vector<double> column(drawn.size());
  for (const auto& [at, first_row] : row_of.front()) {
    (void)first_row;
    bool everyone = true;
    for (size_t d = 1; d < drawn.size() && everyone; ++d) everyone = row_of[d].count(at) > 0;
    if (!everyone) continue;
    band.steps.push_back(at);
    for (size_t c = 0; c < band.width; ++c) {
      for (size_t d = 0; d < drawn.size(); ++d) column[d] = value(drawn[d], row_of[d].at(at), c);
      const SeedStatistics stats = seed_statistics(column.data(), column.size());
      const auto [low, high] = std::minmax_element(column.begin(), column.end());
      band.mean.push_back(stats.mean);
      band.low.push_back(kind == BandKind::MinMax ? *low : stats.mean - stats.std);
      band.high.push_back(kind == BandKind::MinMax ? *high : stats.mean + stats.std);
    }
  }
  const double last_drawn = band.steps.empty() ? -1.0 : band.steps.back();
  for (size_t m : drawn) band.shortened = band.shortened || step(m, rows(m) - 1) > last_drawn;
  return band;
}

}  // namespace descentlab::record
