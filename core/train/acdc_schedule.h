#pragma once
// The AC/DC schedule (Peste et al., NeurIPS 2021; SCIENCE.md §2) as fractions of a run, in steps or epochs:
//   [0, warmup)                        dense warm-up                    (default 10%)
//   [warmup, alternate_until)          compressed / decompressed phases (5% each), starting compressed (until 75%)
//   [alternate_until, decompressed_until)  decompressed                 (until 85%)
//   [decompressed_until, end)          compressed to the end
// A boundary at fraction f of `total` units lies at round(f * total). Phases that round to nothing are dropped and
// neighbours of the same kind merged, so tiny runs still get a valid schedule.

#include <cstdint>
#include <string>
#include <vector>

namespace descentlab::train {

enum class AcdcPhase { dense, compressed, decompressed };
std::string to_string(AcdcPhase phase);

struct AcdcFractions {
  double warmup = 0.10;
  double phase = 0.05;
  double alternate_until = 0.75;
  double decompressed_until = 0.85;

  void validate() const;  // throws std::invalid_argument naming the bad fraction
};

struct AcdcSpan {
  AcdcPhase phase;
  int64_t begin;  // first unit of the phase
  int64_t end;    // one past the last
};

class AcdcSchedule {
 public:
  AcdcSchedule(int64_t total_units, AcdcFractions fractions = {});

  const std::vector<AcdcSpan>& spans() const { return spans_; }
  int64_t total_units() const { return total_; }
  // The phase of a unit (0-based); units past the end belong to the last phase.
  AcdcPhase phase_at(int64_t unit) const;
  // True when `unit` is the first unit of a phase (where masks are computed or dropped).
  bool starts_phase(int64_t unit) const;

 private:
  int64_t total_;
  std::vector<AcdcSpan> spans_;
};

}  // namespace descentlab::train
