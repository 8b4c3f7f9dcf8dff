#include "core/train/acdc_schedule.h"

#include <cmath>
#include <stdexcept>

namespace descentlab::train {

std::string to_string(AcdcPhase phase) {
  switch (phase) {
    case AcdcPhase::dense: return "dense";
    case AcdcPhase::compressed: return "compressed";
    case AcdcPhase::decompressed: return "decompressed";
  }
  return "unknown";
}

void AcdcFractions::validate() const {
  auto fail = [](const std::string& what) { throw std::invalid_argument("AC/DC schedule: " + what); };
  if (!(warmup >= 0 && warmup <= 1)) fail("warmup fraction must be in [0, 1], got " + std::to_string(warmup));
  if (!(phase > 0 && phase <= 1)) fail("phase fraction must be in (0, 1], got " + std::to_string(phase));
  if (!(alternate_until >= warmup && alternate_until <= 1)) {
    fail("alternate_until must be in [warmup, 1], got " + std::to_string(alternate_until));
  }
  if (!(decompressed_until >= alternate_until && decompressed_until <= 1)) {
    fail("decompressed_until must be in [alternate_until, 1], got " + std::to_string(decompressed_until));
  }
}

AcdcSchedule::AcdcSchedule(int64_t total_units, AcdcFractions fractions) : total_(total_units) {
  if (total_units <= 0) throw std::invalid_argument("AC/DC schedule: the run has no units (steps or epochs)");
  fractions.validate();
  auto at = [&](double fraction) {
    return std::min<int64_t>(total_units, std::llround(fraction * static_cast<double>(total_units)));
  };
  std::vector<AcdcSpan> raw;
  raw.push_back({AcdcPhase::dense, 0, at(fractions.warmup)});
  // Alternating phases: as many whole phases as fit (with a tolerance for the binary representation of 0.05).
  const auto phases =
      static_cast<int64_t>(std::floor((fractions.alternate_until - fractions.warmup) / fractions.phase + 1e-9));
  for (int64_t i = 0; i < phases; ++i) {
    raw.push_back({i % 2 == 0 ? AcdcPhase::compressed : AcdcPhase::decompressed,
                   at(fractions.warmup + static_cast<double>(i) * fractions.phase),
                   at(fractions.warmup + static_cast<double>(i + 1) * fractions.phase)});
  }
  raw.push_back({AcdcPhase::decompressed, at(fractions.alternate_until), at(fractions.decompressed_until)});
  raw.push_back({AcdcPhase::compressed, at(fractions.decompressed_until), total_units});
  // Close gaps left by a phase fraction that does not divide the alternating stretch, drop empty spans, merge.
  int64_t cursor = 0;
  for (auto span : raw) {
    span.begin = cursor;
    if (span.end <= span.begin) continue;
    if (!spans_.empty() && spans_.back().phase == span.phase) {
      spans_.back().end = span.end;
    } else {
      spans_.push_back(span);
    }
    cursor = span.end;
  }
}

AcdcPhase AcdcSchedule::phase_at(int64_t unit) const {
  for (const auto& span : spans_) {
    if (unit < span.end) return span.phase;
  }
  return spans_.back().phase;
}

bool AcdcSchedule::starts_phase(int64_t unit) const {
  for (const auto& span : spans_) {
    if (span.begin == unit) return true;
  }
  return false;
}

}  // namespace descentlab::train
