#include <gtest/gtest.h>

#include "onnxprobe/align.h"

namespace onnxprobe {
namespace {

TensorMetrics Row(double max_abs, double max_a) {
  TensorMetrics m;
  m.count = 10;
  m.max_abs = max_abs;
  m.stats_a.max = max_a;
  m.stats_a.min = -max_a / 2;
  return m;
}

TEST(NoiseFloor, NeverBelowTheBaseTolerance) {
  NoiseFloor nf(Tolerance{1e-5, 1e-3, true}, 8);
  EXPECT_DOUBLE_EQ(nf.Next().atol, 1e-5);
  nf.Observe(Row(1e-7, 4), true);  // 2.5e-8 per unit of scale: far below the default
  EXPECT_DOUBLE_EQ(nf.Next().atol, 1e-5);
  EXPECT_DOUBLE_EQ(nf.Next().rtol, 1e-3);
}

TEST(NoiseFloor, GrowsWithTheNoiseOfPassingRowsOnly) {
  NoiseFloor nf(Tolerance{1e-5, 1e-3, true}, 8);
  nf.Observe(Row(2.4e-5, 6), true);  // 4e-6 per unit of scale
  EXPECT_NEAR(nf.Next().atol, 3.2e-5, 1e-12);
  nf.Observe(Row(1.0, 6), false);  // a failing row: an error, not noise
  EXPECT_NEAR(nf.Next().atol, 3.2e-5, 1e-12);
  nf.Observe(Row(1e-6, 0.5), true);  // below unit scale the error is taken as is
  EXPECT_NEAR(nf.floor(), 4e-6, 1e-15);
}

TEST(NoiseFloor, ARowNearItsToleranceIsNoMeasureOfNoise) {
  NoiseFloor nf(Tolerance{1e-5, 1e-3, true}, 8);
  nf.Observe(Row(2.4e-5, 6), true, 0.1);  // noise: a tenth of the allowance
  EXPECT_NEAR(nf.Next().atol, 3.2e-5, 1e-12);
  nf.Observe(Row(1.2e-4, 6), true, 0.9);  // passes, but near its tolerance: a suspect
  EXPECT_NEAR(nf.Next().atol, 3.2e-5, 1e-12);
  nf.Observe(Row(3e-5, 6), true, 0.5);  // at half of it: still noise
  EXPECT_NEAR(nf.Next().atol, 4e-5, 1e-12);
}

TEST(NoiseFloor, AbsoluteToleranceIsNotScaled) {
  NoiseFloor nf(Tolerance{1e-5, 1e-3, false}, 4);
  nf.Observe(Row(1e-5, 100), true);
  EXPECT_NEAR(nf.Next().atol, 4e-5, 1e-15);
}

TEST(NoiseFloor, SinAndCosAllowTheirArgumentsAbsoluteNoise) {
  NoiseFloor nf(Tolerance{1e-5, 1e-3, true}, 8);
  nf.Observe(Row(2.4e-5, 6), true);  // 4e-6 per unit of scale
  // an argument of magnitude 600 carries 600 times that in absolute terms; sin passes it on
  Tolerance t = nf.RaiseForPeriodic(Tolerance{1e-5, 1e-3, true}, 600);
  EXPECT_NEAR(t.atol, 3.2e-5, 1e-12);
  EXPECT_NEAR(t.noise_floor, 8 * 4e-6 * 600, 1e-12);
  // a small argument: no more than Raise gives
  EXPECT_NEAR(nf.RaiseForPeriodic(Tolerance{1e-5, 1e-3, true}, 0.5).noise_floor, 3.2e-5, 1e-12);
  // the scale the tolerance used (mask fills excluded) wins over the statistics
  TensorMetrics masked = Row(2.4e-5, 3.4e38);
  masked.scale = 6;
  NoiseFloor nf2(Tolerance{1e-5, 1e-3, true}, 8);
  nf2.Observe(masked, true);
  EXPECT_NEAR(nf2.floor(), 4e-6, 1e-15);
}

}  // namespace
}  // namespace onnxprobe
