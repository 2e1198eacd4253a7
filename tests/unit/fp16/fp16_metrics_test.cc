// Float16 measures against values worked out by hand from the IEEE binary16 format.
#include "fp16/fp16_metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

namespace onnxprobe {
namespace {

Tensor F32(const std::vector<float>& v) {
  Tensor t = Tensor::Allocate(DType::kFloat32, {static_cast<int64_t>(v.size())}).value();
  std::memcpy(t.data(), v.data(), v.size() * sizeof(float));
  return t;
}

TEST(Fp16Measure, OverflowIsWhatRoundsToInfinity) {
  // 65519 rounds down to 65504 (the largest float16); 65520 and above round to Inf.
  Fp16TensorRow row;
  MeasureFp16(F32({70000.0f, 65519.0f, 65520.0f, -1.0f, 3.0f, 0.0f}), &row);
  EXPECT_EQ(row.elements, 6u);
  EXPECT_EQ(row.overflow, 2u);
  EXPECT_DOUBLE_EQ(row.max_abs, 70000.0);
  // Only 65519 -> 65504 loses anything among the values that stay finite.
  double ref = std::sqrt(65519.0 * 65519.0 + 1.0 + 9.0);
  EXPECT_NEAR(row.roundtrip_error, 15.0 / ref, 1e-12);
}

TEST(Fp16Measure, SubnormalShareCountsNonzeroValuesBelowTwoToMinus14) {
  // 2^-14 = 6.1035e-05 is the smallest normal float16; 1e-5 and 2^-20 are below it.
  Fp16TensorRow row;
  MeasureFp16(F32({1e-5f, std::ldexp(1.0f, -20), 6.2e-5f, 0.5f, 0.0f}), &row);
  EXPECT_EQ(row.overflow, 0u);
  EXPECT_DOUBLE_EQ(row.subnormal_share, 2.0 / 4.0);
}

TEST(Fp16Measure, ValuesFloat16HoldsExactlyHaveNoRoundTripError) {
  Fp16TensorRow row;
  MeasureFp16(F32({1.0f, -2.5f, 1024.0f, 0.125f}), &row);
  EXPECT_EQ(row.roundtrip_error, 0.0);
  EXPECT_EQ(row.subnormal_share, 0.0);
}

TEST(Fp16Compare, NonFiniteResultsAreCountedApart) {
  float inf = std::numeric_limits<float>::infinity();
  PairError e = ComparePair(F32({1.0f, 2.0f, 4.0f}), F32({1.5f, inf, 4.0f}), 0.0, 0.1);
  EXPECT_EQ(e.nonfinite, 1u);
  EXPECT_TRUE(std::isinf(e.worst_ratio));
  EXPECT_DOUBLE_EQ(e.max_abs, 0.5);
  EXPECT_NEAR(e.rel_error, 0.5 / std::sqrt(17.0), 1e-12);  // over the finite pairs
}

TEST(Fp16Compare, WorstRatioIsAllcloseMargin) {
  // |b - a| / (atol + rtol |a|): 0.02 / (0.01 + 0.01 * 1) = 1, 0.05 / (0.01 + 0.01 * 4) = 1.
  PairError e = ComparePair(F32({1.0f, 4.0f}), F32({1.02f, 3.95f}), 0.01, 0.01);
  EXPECT_NEAR(e.worst_ratio, 1.0, 1e-5);
  EXPECT_EQ(e.nonfinite, 0u);
}

}  // namespace
}  // namespace onnxprobe
