// p99_abs against a sorted-array reference. docs/metrics.md: p99 is the upper edge of the
// histogram bin holding the 99th percentile, so it never under-estimates and over-estimates by
// at most 2^(1/8). The reference is the nearest-rank percentile: the ceil(0.99 n)-th smallest
// error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "../fake_side.h"
#include "onnxprobe/compare.h"

namespace onnxprobe {
namespace {

using fake::MakeF32;

double NearestRankP99(const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<double> d;
  for (size_t i = 0; i < a.size(); ++i) d.push_back(std::fabs(double(b[i]) - double(a[i])));
  std::sort(d.begin(), d.end());
  size_t rank = (99 * d.size() + 99) / 100;  // ceil(0.99 n), in integers
  return d[rank - 1];
}

double ReportedP99(const std::vector<float>& a, const std::vector<float>& b) {
  Shape s = {static_cast<int64_t>(a.size())};
  TensorMetrics m = CompareTensors(MakeF32(s, a), MakeF32(s, b), Tolerance{1e-3, 1e-3, false}, -1,
                                   CompareOptions());
  EXPECT_EQ(m.histogram_stride, 1u);  // every element binned: the bound is exact
  return m.p99_abs;
}

// 1000 errors: 989 tiny, two at `v` (ranks 990 and 991), nine outliers of 1.
std::vector<float> WithP99At(float v) {
  std::vector<float> b(1000);
  for (size_t i = 0; i < 989; ++i) b[i] = 1e-6f * float(i + 1) / 989;
  b[989] = b[990] = v;
  for (size_t i = 991; i < 1000; ++i) b[i] = 1.0f;
  return b;
}

TEST(P99, BoundedByTheBinAboveTheTrueValue) {
  // 1.05 * 2^-10 lies in the first eighth of its octave on either binning (mantissa eighths or
  // 2^(k/8) edges), where both give the same upper edge
  std::vector<float> a(1000, 0.0f), b = WithP99At(1.05f * std::ldexp(1.0f, -10));
  double truth = NearestRankP99(a, b);
  EXPECT_EQ(truth, double(1.05f * std::ldexp(1.0f, -10)));
  double got = ReportedP99(a, b);
  EXPECT_GE(got, truth);
  EXPECT_LE(got, truth * std::exp2(1.0 / 8));
}

TEST(P99, ZeroWhenAtLeast99PercentAreExact) {
  std::vector<float> a(1000, 1.0f), b(1000, 1.0f);
  for (size_t i = 0; i < 10; ++i) b[i] = 2.0f;  // 1% differ: rank 990 is still exact
  EXPECT_EQ(NearestRankP99(a, b), 0);
  EXPECT_EQ(ReportedP99(a, b), 0);
  b[10] = 2.0f;  // 11 differ: rank 990 is one of them
  EXPECT_EQ(NearestRankP99(a, b), 1.0);
  double got = ReportedP99(a, b);
  EXPECT_GE(got, 1.0);
  EXPECT_LE(got, std::exp2(1.0 / 8));
}

// Defect 2 of issue 16: the histogram splits each octave by mantissa eighths (edges
// 2^e * (1 + j/8)) while the percentile returns 2^(k/8) edges, so a true p99 in
// [2^(e + (j+1)/8), 2^e * (1 + (j+1)/8)) is under-reported (as low as 0.943x the truth). The fix
// of that defect makes this pass; the lead enables it then.
TEST(P99, DISABLED_NeverUnderEstimatesAcrossAnOctave) {
  std::vector<float> a(1000, 0.0f);
  for (int j = 0; j < 64; ++j) {
    float v = static_cast<float>(std::exp2(-7.0 + j / 64.0));
    std::vector<float> b = WithP99At(v);
    double truth = NearestRankP99(a, b);
    ASSERT_EQ(truth, double(v));
    double got = ReportedP99(a, b);
    EXPECT_GE(got, truth) << "true p99 " << truth << " (2^(-7 + " << j << "/64))";
    EXPECT_LE(got, truth * std::exp2(1.0 / 8)) << "true p99 " << truth;
  }
  // a smooth distribution: errors ramping up to 2^-5
  std::vector<float> ramp(1000);
  for (size_t i = 0; i < ramp.size(); ++i) ramp[i] = std::ldexp(float(i + 1) / 1000, -5);
  double truth = NearestRankP99(a, ramp);
  double got = ReportedP99(a, ramp);
  EXPECT_GE(got, truth);
  EXPECT_LE(got, truth * std::exp2(1.0 / 8));
}

}  // namespace
}  // namespace onnxprobe
