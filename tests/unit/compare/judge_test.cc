// Judging a pair of tensors: the four judging modes where they disagree, the tolerance ratio,
// shape/dtype/NaN/Inf layers, and atol scaled by the reference's magnitude. Expectations are
// computed by hand from the tensors built here.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "../fake_side.h"
#include "onnxprobe/engine/comparison.h"

namespace onnxprobe {
namespace {

using fake::MakeF32;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// 1000 elements of `base`, one of which (index 7) is off by `outlier` on side B.
struct Outlier {
  Tensor a, b;
};
Outlier OneOutlier(float base, float outlier) {
  std::vector<float> va(1000, base), vb(1000, base);
  vb[7] = base + outlier;
  return {MakeF32({1000}, va), MakeF32({1000}, vb)};
}

TensorResult Judged(const Tensor& a, const Tensor& b, const Tolerance& tol, JudgeBy judge,
                    double rel_eps = 0) {
  TolerancePolicy policy;
  policy.judge = judge;
  policy.rel_eps = rel_eps;
  TensorResult row;
  row.tolerance = tol;
  JudgeRow(a, b, policy, CompareOptions(), &row);
  return row;
}

// One element of 1000 off by 0.5 (values 1): it fails elementwise and by max, and passes by
// mean (mean |d| = 5e-4) and p99 (999 of 1000 errors are 0).
TEST(Judge, ModesDisagreeOnASingleOutlier) {
  Outlier t = OneOutlier(1.0f, 0.5f);
  const Tolerance tol{1e-3, 1e-3, false};
  TensorResult ew = Judged(t.a, t.b, tol, JudgeBy::kElementwise);
  TensorResult mx = Judged(t.a, t.b, tol, JudgeBy::kMax);
  TensorResult mean = Judged(t.a, t.b, tol, JudgeBy::kMean);
  TensorResult p99 = Judged(t.a, t.b, tol, JudgeBy::kP99);
  EXPECT_FALSE(ew.within_tolerance);
  EXPECT_FALSE(mx.within_tolerance);
  EXPECT_TRUE(mean.within_tolerance);
  EXPECT_TRUE(p99.within_tolerance);
  EXPECT_FALSE(ew.pass);
  EXPECT_TRUE(mean.pass);

  const TensorMetrics& m = ew.metrics;
  EXPECT_EQ(m.count, 1000u);
  EXPECT_EQ(m.mismatches, 1u);
  EXPECT_EQ(m.exact_matches, 999u);
  EXPECT_DOUBLE_EQ(m.max_abs, 0.5);
  EXPECT_DOUBLE_EQ(m.mean_abs, 0.5 / 1000);
  EXPECT_DOUBLE_EQ(m.max_rel, 0.5);  // rel_eps 0: |d| / |a|
  EXPECT_DOUBLE_EQ(m.mean_rel, 0.5 / 1000);
  EXPECT_EQ(m.p99_abs, 0);
  EXPECT_EQ(m.max_abs_index, std::vector<int64_t>{7});
  EXPECT_EQ(m.a_at_max, 1.0);
  EXPECT_EQ(m.b_at_max, 1.5);

  // elementwise: max |b-a| / (atol + rtol*|a|) = 0.5 / 2e-3
  EXPECT_DOUBLE_EQ(ew.tolerance_ratio, 0.5 / (1e-3 + 1e-3 * 1.0));
  // the others: min(stat_abs / atol, stat_rel / rtol)
  EXPECT_DOUBLE_EQ(mx.tolerance_ratio, 500);
  EXPECT_DOUBLE_EQ(mean.tolerance_ratio, 0.5);
  EXPECT_EQ(p99.tolerance_ratio, 0);
  EXPECT_EQ(ew.grade, Grade::kHighRisk);  // max_rel 0.5 >= 1e-3, whatever the verdict
  EXPECT_EQ(mean.grade, Grade::kHighRisk);
  EXPECT_NE(ew.reason.find("1 of 1000"), std::string::npos) << ew.reason;
  EXPECT_NE(mx.reason.find("max abs error"), std::string::npos) << mx.reason;
  EXPECT_TRUE(mean.reason.empty());
}

// Every element (value 1) off by +-0.25: no outlier for mean or p99 to smooth over, so the
// modes agree: all fail under rtol 1e-3, all pass under rtol 0.3.
TEST(Judge, UniformErrorFailsEveryMode) {
  std::vector<float> va(100, 1.0f), vb(100, 1.0f);
  for (size_t i = 0; i < vb.size(); ++i) vb[i] = 1.0f + (i % 2 ? 0.25f : -0.25f);
  Tensor a = MakeF32({10, 10}, va), b = MakeF32({10, 10}, vb);
  const Tolerance tight{1e-3, 1e-3, false};
  for (JudgeBy j : {JudgeBy::kElementwise, JudgeBy::kMax, JudgeBy::kMean, JudgeBy::kP99}) {
    TensorResult row = Judged(a, b, tight, j);
    EXPECT_FALSE(row.within_tolerance) << JudgeByName(j);
    EXPECT_GT(row.tolerance_ratio, 1) << JudgeByName(j);
  }
  const Tolerance loose{1e-3, 0.3, false};  // allowed 1e-3 + 0.3*1 > 0.25
  for (JudgeBy j : {JudgeBy::kElementwise, JudgeBy::kMax, JudgeBy::kMean, JudgeBy::kP99}) {
    TensorResult row = Judged(a, b, loose, j);
    EXPECT_TRUE(row.within_tolerance) << JudgeByName(j);
    EXPECT_LE(row.tolerance_ratio, 1) << JudgeByName(j);
  }
  // mean of |d| is 0.25 exactly; by mean the ratio is min(0.25/1e-3, 0.25/0.3)
  EXPECT_DOUBLE_EQ(Judged(a, b, loose, JudgeBy::kMean).tolerance_ratio, 0.25 / 0.3);
  // elementwise: 0.25 / (1e-3 + 0.3*1)
  EXPECT_DOUBLE_EQ(Judged(a, b, loose, JudgeBy::kElementwise).tolerance_ratio, 0.25 / (1e-3 + 0.3));
}

TEST(ToleranceRatio, TheNearerOfAbsoluteAndRelativeDecides) {
  // values 100, one element off by 0.5: abs 0.5 vs atol 1e-3 (ratio 500), rel 5e-3 vs rtol 1e-3
  // (ratio 5): by max the ratio is 5, the relative error decides
  Outlier t = OneOutlier(100.0f, 0.5f);
  const Tolerance tol{1e-3, 1e-3, false};
  TensorResult mx = Judged(t.a, t.b, tol, JudgeBy::kMax);
  EXPECT_DOUBLE_EQ(mx.metrics.max_rel, 0.5 / 100);
  EXPECT_DOUBLE_EQ(mx.tolerance_ratio, (0.5 / 100) / 1e-3);
  EXPECT_FALSE(mx.within_tolerance);
  // atol 2e-3, rtol 1e-2 on values 1: abs ratio 250, rel ratio 50
  Outlier u = OneOutlier(1.0f, 0.5f);
  TensorResult m2 = Judged(u.a, u.b, Tolerance{2e-3, 1e-2, false}, JudgeBy::kMax);
  EXPECT_DOUBLE_EQ(m2.tolerance_ratio, 50);
  // and where atol is the nearer: atol 0.1, rtol 1e-3 -> abs ratio 5, rel ratio 500
  TensorResult m3 = Judged(u.a, u.b, Tolerance{0.1, 1e-3, false}, JudgeBy::kMax);
  EXPECT_DOUBLE_EQ(m3.tolerance_ratio, 5);
  // elementwise: 0.5 / (0.1 + 1e-3 * 1)
  TensorResult e3 = Judged(u.a, u.b, Tolerance{0.1, 1e-3, false}, JudgeBy::kElementwise);
  EXPECT_DOUBLE_EQ(e3.tolerance_ratio, 0.5 / (0.1 + 1e-3));
  // identical tensors: ratio 0 under every mode
  for (JudgeBy j : {JudgeBy::kElementwise, JudgeBy::kMax, JudgeBy::kMean, JudgeBy::kP99})
    EXPECT_EQ(Judged(u.a, u.a, tol, j).tolerance_ratio, 0) << JudgeByName(j);
}

TEST(Judge, ShapeMismatchFailsEveryMode) {
  Tensor a = MakeF32({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor b = MakeF32({3, 2}, {1, 2, 3, 4, 5, 6});
  for (JudgeBy j : {JudgeBy::kElementwise, JudgeBy::kMax, JudgeBy::kMean, JudgeBy::kP99}) {
    TensorResult row = Judged(a, b, Tolerance{1, 1, false}, j);
    EXPECT_FALSE(row.within_tolerance) << JudgeByName(j);
    EXPECT_FALSE(row.metrics.shape_match);
    EXPECT_EQ(row.tolerance_ratio, kInf);
    EXPECT_NE(row.reason.find("shape [3, 2], reference [2, 3]"), std::string::npos) << row.reason;
  }
}

TEST(Judge, DtypeMismatchFailsEveryMode) {
  Tensor a = MakeF32({2}, {1, 2});
  auto b = Tensor::Allocate(DType::kFloat64, {2});
  ASSERT_TRUE(b.ok());
  b->data_as<double>()[0] = 1;
  b->data_as<double>()[1] = 2;
  for (JudgeBy j : {JudgeBy::kElementwise, JudgeBy::kMax, JudgeBy::kMean, JudgeBy::kP99}) {
    TensorResult row = Judged(a, *b, Tolerance{1, 1, false}, j);
    EXPECT_FALSE(row.within_tolerance) << JudgeByName(j);
    EXPECT_FALSE(row.metrics.dtype_match);
    EXPECT_EQ(row.tolerance_ratio, kInf);
    EXPECT_NE(row.reason.find("dtype float64, reference float32"), std::string::npos) << row.reason;
  }
}

TEST(Judge, NanAndInfPatterns) {
  const Tolerance tol{1e-3, 1e-3, false};
  const std::vector<JudgeBy> modes = {JudgeBy::kElementwise, JudgeBy::kMax, JudgeBy::kMean,
                                      JudgeBy::kP99};
  // the same NaN and Inf positions on both sides: those positions agree
  Tensor a = MakeF32({4}, {1, kNaN, INFINITY, 4});
  for (JudgeBy j : modes) {
    TensorResult row = Judged(a, MakeF32({4}, {1, kNaN, INFINITY, 4}), tol, j);
    EXPECT_TRUE(row.within_tolerance) << JudgeByName(j);
    EXPECT_EQ(row.metrics.nonfinite_differ, 0u);
    EXPECT_EQ(row.metrics.count, 2u);  // finite pairs
  }
  // a NaN where the reference is finite fails every mode, however loose
  for (JudgeBy j : modes) {
    TensorResult row =
        Judged(MakeF32({3}, {1, 2, 3}), MakeF32({3}, {1, kNaN, 3}), Tolerance{100, 100, false}, j);
    EXPECT_FALSE(row.within_tolerance) << JudgeByName(j);
    EXPECT_EQ(row.metrics.nonfinite_new, 1u);
    EXPECT_EQ(row.metrics.nonfinite_differ, 1u);
    EXPECT_EQ(row.tolerance_ratio, kInf);
    EXPECT_NE(row.reason.find("1 NaN/Inf where the reference is finite"), std::string::npos)
        << row.reason;
  }
  // +Inf in A, -Inf in B: a differing pattern, but nothing new where A was finite
  for (JudgeBy j : modes) {
    TensorResult row = Judged(MakeF32({3}, {1, INFINITY, 3}), MakeF32({3}, {1, -INFINITY, 3}),
                              Tolerance{100, 100, false}, j);
    EXPECT_FALSE(row.within_tolerance) << JudgeByName(j);
    EXPECT_EQ(row.metrics.nonfinite_new, 0u);
    EXPECT_EQ(row.metrics.nonfinite_differ, 1u);
    EXPECT_NE(row.reason.find("1 positions where NaN/Inf differ"), std::string::npos) << row.reason;
  }
  // a finite value where A has NaN: a differing pattern too
  TensorResult row =
      Judged(MakeF32({2}, {kNaN, 1}), MakeF32({2}, {0, 1}), tol, JudgeBy::kElementwise);
  EXPECT_FALSE(row.within_tolerance);
  EXPECT_EQ(row.metrics.nonfinite_new, 0u);
  EXPECT_EQ(row.metrics.nonfinite_differ, 1u);
}

// scale_atol: the absolute tolerance applied is atol * max(1, max|a|).
TEST(Judge, ScaleAtolGrowsWithTheReferenceMagnitude) {
  // max|a| = 50: atol 1e-3 becomes 0.05; the element near 0 is off by 0.02 (rtol 0)
  Tensor a = MakeF32({3}, {50, -20, 0});
  Tensor b = MakeF32({3}, {50, -20, 0.02f});
  TensorResult scaled = Judged(a, b, Tolerance{1e-3, 0, true}, JudgeBy::kElementwise, -1);
  EXPECT_DOUBLE_EQ(scaled.metrics.atol_used, 1e-3 * 50);
  EXPECT_TRUE(scaled.within_tolerance);
  EXPECT_DOUBLE_EQ(scaled.tolerance_ratio, double(0.02f) / (1e-3 * 50));
  TensorResult plain = Judged(a, b, Tolerance{1e-3, 0, false}, JudgeBy::kElementwise, -1);
  EXPECT_DOUBLE_EQ(plain.metrics.atol_used, 1e-3);
  EXPECT_FALSE(plain.within_tolerance);
  // by max the scaled atol applies too: max abs 0.02 <= 0.05
  EXPECT_TRUE(Judged(a, b, Tolerance{1e-3, 0, true}, JudgeBy::kMax, -1).within_tolerance);
  EXPECT_FALSE(Judged(a, b, Tolerance{1e-3, 0, false}, JudgeBy::kMax, -1).within_tolerance);
  // below unit scale atol stays as given: max(1, 0.5) = 1
  TensorResult small = Judged(MakeF32({2}, {0.5f, 0}), MakeF32({2}, {0.5f, 2e-3f}),
                              Tolerance{1e-3, 0, true}, JudgeBy::kElementwise, -1);
  EXPECT_DOUBLE_EQ(small.metrics.atol_used, 1e-3);
  EXPECT_FALSE(small.within_tolerance);
}

TEST(JudgeRow, AdvisoryRowsPassWhateverTheMeasurement) {
  Outlier t = OneOutlier(1.0f, 0.5f);
  TolerancePolicy policy;
  TensorResult row;
  row.state = RowState::kAdvisory;
  row.tolerance = Tolerance{1e-3, 1e-3, false};
  JudgeRow(t.a, t.b, policy, CompareOptions(), &row);
  EXPECT_FALSE(row.within_tolerance);
  EXPECT_TRUE(row.pass);
  EXPECT_FALSE(row.reason.empty());  // why it would have failed
}

}  // namespace
}  // namespace onnxprobe

namespace onnxprobe {
namespace {

// Sin and Cos pass their argument's absolute error on unchanged: their budget is the absolute
// error allowed the argument, atol * max(1, max|argument|), and nothing else raises it.
TEST(PeriodicBudget, AllowsTheArgumentsAbsoluteTolerance) {
  Tolerance t{1e-5, 1e-3, true};
  Tolerance big = PeriodicBudget(t, 600);
  EXPECT_DOUBLE_EQ(big.noise_floor, 6e-3);
  EXPECT_DOUBLE_EQ(big.atol, 1e-5);
  EXPECT_DOUBLE_EQ(big.rtol, 1e-3);
  EXPECT_DOUBLE_EQ(PeriodicBudget(t, 0.5).noise_floor, 0);  // small arguments: the base one
  Tolerance absolute{1e-5, 1e-3, false};                    // an absolute atol passes as given
  EXPECT_DOUBLE_EQ(PeriodicBudget(absolute, 600).noise_floor, 0);
  // a float16 round trip on an argument of 600 errs by up to 600 * 2^-11 = 0.29: still fails
  EXPECT_LT(big.noise_floor, 600 * std::ldexp(1.0, -11));
}

}  // namespace
}  // namespace onnxprobe
