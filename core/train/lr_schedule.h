#pragma once
// Learning-rate schedules (issue 18): a linear warm-up, then constant, cosine or linear decay to zero, as a pure
// function of the optimizer step, so that a resumed run continues its schedule exactly (it restores the step).
// Applied the same way to AdamW, HAM and HORST: each step's update uses scheduled_lr() as its lr, and HORST's mirror
// factor exp(-α sign(θ) s_k - ηβ) takes the same scheduled η, as the paper's update does.
//
//   step s in [0, W):        lr · (s + 1) / W                          (warm-up; W = warmup steps, 0 for none)
//   constant, s >= W:         lr
//   cosine,   s >= W:         lr · (1 + cos(π · (s - W) / (T - W))) / 2   (T = total steps; reaches 0 after the end)
//   linear,   s >= W:         lr · (1 - (s - W) / (T - W))
// Steps past the end keep the last step's rate.

#include <cstdint>

#include "core/config/choices.h"

namespace descentlab::train {

using config::LrShape;  // constant | cosine | linear: its words are config::Choices<LrShape>

struct LrSchedule {
  LrShape shape = LrShape::constant;
  double base_lr = 0.0;
  int64_t warmup_steps = 0;  // W
  int64_t total_steps = 0;   // T

  // The rate of optimizer step `step` (0-based: the first update is step 0).
  double at(int64_t step) const;
  // Throws std::invalid_argument naming the bad field: a negative or non-finite lr, warm-up steps outside [0, T],
  // no steps at all.
  void validate() const;
};

// `warmup` as the config gives it: a fraction of the run in [0, 1) (0.05: the first 5 % of the steps, rounded), or a
// whole number of steps >= 1. Throws std::invalid_argument for a negative, non-finite or fractional value >= 1.
int64_t warmup_steps_from(double warmup, int64_t total_steps);

}  // namespace descentlab::train
