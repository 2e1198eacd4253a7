#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "onnxprobe/tensor/tensor.h"

namespace onnxprobe {
namespace {

// Reference bit patterns from IEEE 754 binary16 and bfloat16 definitions.
TEST(Half, KnownValues) {
  EXPECT_EQ(HalfToFloat(0x3c00), 1.0f);
  EXPECT_EQ(HalfToFloat(0xc000), -2.0f);
  EXPECT_EQ(HalfToFloat(0x7bff), 65504.0f);
  EXPECT_EQ(HalfToFloat(0x0001), std::ldexp(1.0f, -24));  // smallest subnormal
  EXPECT_EQ(HalfToFloat(0x0400), std::ldexp(1.0f, -14));  // smallest normal
  EXPECT_TRUE(std::isinf(HalfToFloat(0x7c00)));
  EXPECT_TRUE(std::isnan(HalfToFloat(0x7e00)));
  EXPECT_TRUE(std::signbit(HalfToFloat(0x8000)));
}

TEST(Half, RoundsToNearestEven) {
  EXPECT_EQ(FloatToHalf(1.0f), 0x3c00);
  EXPECT_EQ(FloatToHalf(65504.0f), 0x7bff);
  EXPECT_EQ(FloatToHalf(65520.0f), 0x7c00);  // halfway to the next: rounds to Inf
  EXPECT_EQ(FloatToHalf(1.0f + std::ldexp(1.0f, -11)), 0x3c00);      // tie -> even
  EXPECT_EQ(FloatToHalf(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);  // tie -> even (up)
  EXPECT_EQ(FloatToHalf(std::ldexp(1.0f, -25)), 0x0000);  // tie between 0 and min subnormal
  EXPECT_EQ(FloatToHalf(std::ldexp(1.5f, -25)), 0x0001);
  EXPECT_EQ(FloatToHalf(-0.0f), 0x8000);
  EXPECT_EQ(FloatToHalf(INFINITY), 0x7c00);
  EXPECT_EQ(FloatToHalf(NAN) & 0x7c00, 0x7c00);
  EXPECT_NE(FloatToHalf(NAN) & 0x3ff, 0);
}

TEST(Half, EveryHalfRoundTrips) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    float f = HalfToFloat(static_cast<uint16_t>(h));
    if (std::isnan(f)) continue;
    ASSERT_EQ(FloatToHalf(f), h) << std::hex << h;
  }
}

TEST(BFloat16, KnownValues) {
  EXPECT_EQ(BFloat16ToFloat(0x3f80), 1.0f);
  EXPECT_EQ(FloatToBFloat16(1.0f), 0x3f80);
  float x;
  uint32_t bits = 0x3f808000;  // exactly halfway between 0x3f80 and 0x3f81: ties to even
  std::memcpy(&x, &bits, 4);
  EXPECT_EQ(FloatToBFloat16(x), 0x3f80);
  bits = 0x3f818000;
  std::memcpy(&x, &bits, 4);
  EXPECT_EQ(FloatToBFloat16(x), 0x3f82);
  EXPECT_TRUE(std::isnan(BFloat16ToFloat(FloatToBFloat16(NAN))));
}

TEST(DType, OnnxNumbering) {
  EXPECT_EQ(DTypeToOnnx(DType::kFloat32), 1);
  EXPECT_EQ(DTypeToOnnx(DType::kBFloat16), 16);
  EXPECT_EQ(*DTypeFromOnnx(10), DType::kFloat16);
  auto s = DTypeFromOnnx(8);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("STRING"), std::string::npos);
}

TEST(Shape, SizesAreSixtyFourBit) {
  // 5 GiB of float32, computed without allocating anything
  auto bytes = NumBytes(DType::kFloat32, {5, 1024, 1024, 256});
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(*bytes, 5ull * 1024 * 1024 * 1024);
  EXPECT_EQ(*NumElements({3, 0, 7}), 0u);
  EXPECT_EQ(*NumElements({}), 1u);
}

TEST(Shape, OverflowAndNegativeDimsRejected) {
  EXPECT_FALSE(NumElements({1ll << 32, 1ll << 32}).ok());
  EXPECT_FALSE(NumElements({-1, 3}).ok());
  // fits as elements but not as bytes
  EXPECT_TRUE(NumElements({1ll << 61}).ok());
  EXPECT_FALSE(NumBytes(DType::kFloat64, {1ll << 61}).ok());
}

TEST(Tensor, AllocateRejectsImpossibleSizes) {
  auto t = Tensor::Allocate(DType::kFloat32, {1ll << 40, 1ll << 20});
  ASSERT_FALSE(t.ok());
}

TEST(Tensor, StatsMatchHandComputedValues) {
  auto t = *Tensor::Allocate(DType::kFloat32, {6});
  float v[] = {1, 2, 3, 4, NAN, INFINITY};
  std::memcpy(t.data(), v, sizeof(v));
  TensorStats s = ComputeStats(t);
  EXPECT_EQ(s.count, 4u);
  EXPECT_EQ(s.nan_count, 1u);
  EXPECT_EQ(s.inf_count, 1u);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 4);
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_NEAR(s.std, std::sqrt(1.25), 1e-12);
}

TEST(Tensor, StatsAcrossBlocksEqualScalarLoop) {
  auto t = *Tensor::Allocate(DType::kFloat32, {10000});
  auto* p = t.data_as<float>();
  double sum = 0;
  for (int i = 0; i < 10000; ++i) {
    p[i] = static_cast<float>(std::sin(i * 0.1));
    sum += p[i];
  }
  TensorStats s = ComputeStats(t);
  EXPECT_NEAR(s.mean, sum / 10000, 1e-12);
  EXPECT_EQ(s.count, 10000u);
}

}  // namespace
}  // namespace onnxprobe
