// The exact reference's budget (ExactRoundingBudget): twice the rounding the closer side's
// precision explains, scaled to the coarser precision; never raised by the side further away.
#include <gtest/gtest.h>

#include "onnxprobe/compare/compare.h"

namespace onnxprobe {
namespace {

TEST(ExactRoundingBudget, TwoFloat32SidesGetTwiceTheSmallerDistance) {
  Tolerance t = ExactRoundingBudget(Tolerance(), 3e-6, 1e-6);
  EXPECT_DOUBLE_EQ(t.noise_floor, 2e-6);
  EXPECT_DOUBLE_EQ(t.float64_error, 1e-6);
  // a far side (a fault) does not raise it
  EXPECT_DOUBLE_EQ(ExactRoundingBudget(Tolerance(), 1e-6, 5.0).noise_floor, 2e-6);
}

TEST(ExactRoundingBudget, AFloat16SideIsAllowedWhatFloat16Rounding) {
  const double u32 = UnitRoundoff(DType::kFloat32), u16 = UnitRoundoff(DType::kFloat16);
  EXPECT_DOUBLE_EQ(u16 / u32, 8192.0);
  // rounding per unit roundoff: A 1e-6 / u32 = 16.8, B 2e-3 / u16 = 4.1: B's sets the factor
  Tolerance t = ExactRoundingBudget(Tolerance(), 1e-6, 2e-3, u32, u16);
  EXPECT_NEAR(t.noise_floor, 2 * 2e-3, 1e-12);
  // a faulted float16 side (far beyond its rounding): A's factor, scaled to float16
  t = ExactRoundingBudget(Tolerance(), 1e-6, 0.5, u32, u16);
  EXPECT_NEAR(t.noise_floor, 2 * (1e-6 / u32) * u16, 1e-12);
}

TEST(ExactRoundingBudget, UnmeasuredOrExactRowsKeepTheirTolerance) {
  Tolerance given;
  given.noise_floor = 1e-7;
  EXPECT_DOUBLE_EQ(ExactRoundingBudget(given, -1, 1e-3).noise_floor, 1e-7);
  EXPECT_DOUBLE_EQ(ExactRoundingBudget(given, 0, 1e-3).noise_floor, 1e-7);
}

}  // namespace
}  // namespace onnxprobe
