#include "core/train/lr_schedule.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace descentlab::train {

void LrSchedule::validate() const {
  if (!std::isfinite(base_lr) || base_lr < 0.0)
    throw std::invalid_argument("lr " + std::to_string(base_lr) + ": expected a finite number >= 0");
  if (total_steps < 1)
    throw std::invalid_argument("total steps " + std::to_string(total_steps) + ": a schedule needs at least one");
  if (warmup_steps < 0 || warmup_steps > total_steps) {
    throw std::invalid_argument("warm-up of " + std::to_string(warmup_steps) + " steps: expected 0 to the run's " +
                                std::to_string(total_steps) + " steps");
  }
}

double LrSchedule::at(int64_t step) const {
  const int64_t s = std::clamp<int64_t>(step, 0, std::max<int64_t>(total_steps - 1, 0));
  if (s < warmup_steps) return base_lr * static_cast<double>(s + 1) / static_cast<double>(warmup_steps);
  const int64_t decay_steps = total_steps - warmup_steps;
  if (shape == LrShape::constant || decay_steps <= 0) return base_lr;
  const double progress = static_cast<double>(s - warmup_steps) / static_cast<double>(decay_steps);
  constexpr double kPi = 3.14159265358979323846;
  if (shape == LrShape::cosine) return base_lr * 0.5 * (1.0 + std::cos(kPi * progress));
  return base_lr * (1.0 - progress);
}

int64_t warmup_steps_from(double warmup, int64_t total_steps) {
  if (!std::isfinite(warmup) || warmup < 0.0)
    throw std::invalid_argument("warmup " + std::to_string(warmup) + ": expected a fraction in [0, 1) or steps >= 1");
  if (warmup < 1.0) return std::llround(warmup * static_cast<double>(total_steps));
  if (warmup != std::floor(warmup)) {
    throw std::invalid_argument("warmup " + std::to_string(warmup) +
                                ": a fraction must be below 1, a number of steps whole");
  }
  return static_cast<int64_t>(warmup);
}

}  // namespace descentlab::train
