// Learning-rate schedules (issue 18): each shape's rate at known steps, the warm-up, and bad values named.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "core/train/lr_schedule.h"

namespace descentlab::train {
namespace {

TEST(LrSchedule, ConstantWithoutWarmupIsTheBaseRateAtEveryStep) {
  const LrSchedule schedule{LrShape::constant, 0.003, 0, 100};
  for (int64_t step : {0, 1, 50, 99, 150}) EXPECT_DOUBLE_EQ(schedule.at(step), 0.003) << step;
}

TEST(LrSchedule, WarmupRisesLinearlyToTheBaseRate) {
  const LrSchedule schedule{LrShape::constant, 0.01, 4, 100};
  EXPECT_DOUBLE_EQ(schedule.at(0), 0.0025);
  EXPECT_DOUBLE_EQ(schedule.at(1), 0.005);
  EXPECT_DOUBLE_EQ(schedule.at(3), 0.01);
  EXPECT_DOUBLE_EQ(schedule.at(4), 0.01);
}

TEST(LrSchedule, CosineDecaysFromTheBaseRateThroughHalfToNearZero) {
  // 10 warm-up steps, then 90 of decay: half-way (step 55) the rate is half, the last step's nearly 0.
  const LrSchedule schedule{LrShape::cosine, 0.002, 10, 100};
  EXPECT_DOUBLE_EQ(schedule.at(9), 0.002);
  EXPECT_DOUBLE_EQ(schedule.at(10), 0.002);
  EXPECT_NEAR(schedule.at(55), 0.001, 1e-15);
  EXPECT_NEAR(schedule.at(99), 0.002 * 0.5 * (1 + std::cos(3.14159265358979323846 * 89.0 / 90.0)), 1e-18);
  EXPECT_LT(schedule.at(99), 0.002 * 0.001);
  EXPECT_DOUBLE_EQ(schedule.at(1000), schedule.at(99));  // past the end: the last step's rate
  for (int64_t step = 11; step < 100; ++step) EXPECT_LT(schedule.at(step), schedule.at(step - 1)) << step;
}

TEST(LrSchedule, LinearDecaysEvenly) {
  const LrSchedule schedule{LrShape::linear, 0.1, 0, 10};
  EXPECT_DOUBLE_EQ(schedule.at(0), 0.1);
  EXPECT_NEAR(schedule.at(5), 0.05, 1e-15);
  EXPECT_NEAR(schedule.at(9), 0.01, 1e-15);
  EXPECT_NEAR(schedule.at(-3), 0.1, 1e-15);  // before the start: the first step's rate
}

TEST(LrSchedule, AWarmupAsLongAsTheRunNeverDecays) {
  const LrSchedule schedule{LrShape::cosine, 1.0, 8, 8};
  EXPECT_DOUBLE_EQ(schedule.at(0), 0.125);
  EXPECT_DOUBLE_EQ(schedule.at(7), 1.0);
}

TEST(LrSchedule, ShapesAndWarmupsAreReadAndBadOnesNamed) {
  EXPECT_EQ(config::require_choice<LrShape>("cosine", "train.lr_schedule"), LrShape::cosine);
  EXPECT_EQ(config::word(LrShape::linear), "linear");
  try {
    config::require_choice<LrShape>("step", "train.lr_schedule");
    FAIL() << "accepted \"step\"";
  } catch (const Error& error) {
    EXPECT_NE(
        std::string(error.what()).find("train.lr_schedule: unknown value \"step\" (known: constant, cosine, linear)"),
        std::string::npos)
        << error.what();
  }
  EXPECT_EQ(warmup_steps_from(0.05, 1000), 50);  // a fraction of the run
  EXPECT_EQ(warmup_steps_from(0.0, 1000), 0);
  EXPECT_EQ(warmup_steps_from(200, 1000), 200);  // whole steps
  EXPECT_THROW(warmup_steps_from(1.5, 1000), std::invalid_argument);
  EXPECT_THROW(warmup_steps_from(-0.1, 1000), std::invalid_argument);
  EXPECT_THROW(warmup_steps_from(std::nan(""), 1000), std::invalid_argument);
  EXPECT_NO_THROW((LrSchedule{LrShape::cosine, 0.001, 10, 100}.validate()));
  EXPECT_THROW((LrSchedule{LrShape::cosine, 0.001, 101, 100}.validate()), std::invalid_argument);
  EXPECT_THROW((LrSchedule{LrShape::cosine, -0.001, 0, 100}.validate()), std::invalid_argument);
  EXPECT_THROW((LrSchedule{LrShape::cosine, 0.001, 0, 0}.validate()), std::invalid_argument);
}

}  // namespace
}  // namespace descentlab::train
