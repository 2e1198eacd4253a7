// The float32 comparison kernel against a reference written from the metrics' definitions
// (docs/metrics.md), one element at a time in double: sizes around the chunk and vector widths,
// NaN/Inf in some chunks, one and several threads, and the largest tolerance ratio wherever it
// lies. The vector and portable chunk paths must agree with each other too.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "compare/chunk_f32.h"
#include "onnxprobe/compare/compare.h"

namespace onnxprobe {
namespace {

struct Reference {
  uint64_t count = 0, mismatches = 0, exact = 0, nonfinite_new = 0, nonfinite_differ = 0;
  double sum_abs = 0, sum_rel = 0, max_abs = 0, max_rel = 0, max_ratio = 0;
  double dot = 0, na2 = 0, nb2 = 0, nd2 = 0;
  uint64_t argmax = 0;
  TensorStats a, b;
};

void AddStats(double v, TensorStats* s, double* sum, double* sumsq) {
  if (std::isnan(v)) {
    ++s->nan_count;
  } else if (std::isinf(v)) {
    ++s->inf_count;
  } else {
    s->min = s->count == 0 ? v : std::min(s->min, v);
    s->max = s->count == 0 ? v : std::max(s->max, v);
    ++s->count;
    *sum += v;
    *sumsq += v * v;
  }
}

Reference Measure(const std::vector<float>& a, const std::vector<float>& b, double atol,
                  double rtol, double eps) {
  Reference r;
  double sa = 0, sqa = 0, sb = 0, sqb = 0;
  bool any = false;
  for (size_t i = 0; i < a.size(); ++i) {
    double x = a[i], y = b[i];
    AddStats(x, &r.a, &sa, &sqa);
    AddStats(y, &r.b, &sb, &sqb);
    if (!std::isfinite(x) || !std::isfinite(y)) {
      bool same = (std::isnan(x) && std::isnan(y)) || x == y;
      if (!same) {
        ++r.mismatches;
        ++r.nonfinite_differ;
        if (std::isfinite(x)) ++r.nonfinite_new;
      }
      continue;
    }
    double d = y - x, ad = std::fabs(d), allowed = atol + rtol * std::fabs(x);
    double rel = ad / (std::fabs(x) + eps), ratio = ad / allowed;
    ++r.count;
    r.sum_abs += ad;
    r.sum_rel += rel;
    if (!any || ad > r.max_abs) r.max_abs = ad, r.argmax = i;
    any = true;
    r.max_rel = std::max(r.max_rel, rel);
    if (ratio > r.max_ratio) r.max_ratio = ratio;  // NaN (0/0) never counts
    r.mismatches += ad > allowed;
    r.exact += ad == 0;
    r.dot += x * y;
    r.na2 += x * x;
    r.nb2 += y * y;
    r.nd2 += d * d;
  }
  r.a.mean = r.a.count ? sa / double(r.a.count) : 0;
  r.b.mean = r.b.count ? sb / double(r.b.count) : 0;
  r.a.std = r.a.count ? std::sqrt(std::max(0.0, sqa / double(r.a.count) - r.a.mean * r.a.mean)) : 0;
  r.b.std = r.b.count ? std::sqrt(std::max(0.0, sqb / double(r.b.count) - r.b.mean * r.b.mean)) : 0;
  return r;
}

Tensor FromFloats(const std::vector<float>& v) {
  Tensor t = *Tensor::Allocate(DType::kFloat32, {int64_t(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.data_as<float>()[i] = v[i];
  return t;
}

// Values over several magnitudes, a tenth of them exact, some of them zero.
void Fill(size_t n, uint32_t seed, std::vector<float>* a, std::vector<float>* b) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> g;
  std::uniform_int_distribution<int> pick(0, 19), octave(-12, 6);
  a->resize(n);
  b->resize(n);
  for (size_t i = 0; i < n; ++i) {
    float x = std::ldexp(g(rng), octave(rng));
    if (pick(rng) == 0) x = 0;
    int kind = pick(rng);
    (*a)[i] = x;
    (*b)[i] = kind < 2 ? x : x * (1 + 1e-3f * g(rng)) + (kind == 2 ? 1e-4f * g(rng) : 0.0f);
  }
}

void ExpectMatches(const std::vector<float>& a, const std::vector<float>& b, double atol,
                   double rtol, double eps, int threads) {
  SCOPED_TRACE("n=" + std::to_string(a.size()) + " threads=" + std::to_string(threads));
  Tolerance tol;
  tol.atol = atol;
  tol.rtol = rtol;
  tol.scale_atol = false;
  CompareOptions o;
  o.threads = threads;
  o.channels = false;
  TensorMetrics m = CompareTensors(FromFloats(a), FromFloats(b), tol, eps, o);
  Reference r = Measure(a, b, atol, rtol, m.rel_eps);
  if (eps >= 0) EXPECT_EQ(m.rel_eps, eps);
  EXPECT_EQ(m.count, r.count);
  EXPECT_EQ(m.mismatches, r.mismatches);
  EXPECT_EQ(m.exact_matches, r.exact);
  EXPECT_EQ(m.nonfinite_new, r.nonfinite_new);
  EXPECT_EQ(m.nonfinite_differ, r.nonfinite_differ);
  // maxima of the same correctly rounded values: equal, not close
  EXPECT_EQ(m.max_abs, r.max_abs);
  EXPECT_EQ(m.max_rel, r.max_rel);
  EXPECT_EQ(m.max_tol_ratio, r.max_ratio);
  if (r.count > 0) {
    EXPECT_EQ(m.max_abs_index, std::vector<int64_t>{int64_t(r.argmax)});
    EXPECT_EQ(m.a_at_max, a[r.argmax]);
    EXPECT_EQ(m.b_at_max, b[r.argmax]);
    // sums in another order: within a few roundings
    EXPECT_NEAR(m.mean_abs, r.sum_abs / double(r.count), 1e-10 * r.sum_abs / double(r.count));
    EXPECT_NEAR(m.mean_rel, r.sum_rel / double(r.count), 1e-10 * r.sum_rel / double(r.count));
  }
  if (r.na2 > 0 && r.nb2 > 0) {
    EXPECT_NEAR(m.cosine, r.dot / (std::sqrt(r.na2) * std::sqrt(r.nb2)), 1e-12);
  }
  if (r.nd2 > 0) {
    double snr = 10 * std::log10(r.na2 / r.nd2);
    if (std::isinf(snr)) {
      EXPECT_EQ(m.snr_db, snr);
    } else {
      EXPECT_NEAR(m.snr_db, snr, 1e-9);
    }
  }
  for (auto [got, want] : {std::pair{m.stats_a, r.a}, std::pair{m.stats_b, r.b}}) {
    EXPECT_EQ(got.count, want.count);
    EXPECT_EQ(got.nan_count, want.nan_count);
    EXPECT_EQ(got.inf_count, want.inf_count);
    EXPECT_EQ(got.min, want.min);
    EXPECT_EQ(got.max, want.max);
    EXPECT_NEAR(got.mean, want.mean, 1e-12 * std::max(1.0, std::fabs(want.mean)));
    // std from sum(x^2)/n - mean^2: the order of the sums moves it by roundings of mean^2
    double second = want.std * want.std + want.mean * want.mean;
    // (and the reference's own sum, in order, drifts by up to n roundings)
    double rounding = std::max(1e-12, 1e-15 * double(a.size()));
    EXPECT_NEAR(got.std * got.std, want.std * want.std, rounding * std::max(1.0, second));
  }
}

TEST(KernelF32, EveryMetricMatchesAnElementwiseReference) {
  for (size_t n : {1, 3, 4, 7, 8, 9, 1023, 1024, 1029, 4100, 70001, 300007}) {
    std::vector<float> a, b;
    Fill(n, static_cast<uint32_t>(n), &a, &b);
    ExpectMatches(a, b, 1e-5, 1e-3, 1e-6, 1);
    ExpectMatches(a, b, 1e-5, 1e-3, -1, 1);  // eps from max|a|
  }
  std::vector<float> a, b;  // split across threads: at least 2^20 elements each
  Fill((3 << 20) + 5, 9, &a, &b);
  ExpectMatches(a, b, 1e-5, 1e-3, -1, 3);
}

TEST(KernelF32, NanAndInfInSomeChunks) {
  std::vector<float> a, b;
  Fill(5000, 7, &a, &b);
  a[0] = b[0] = NAN;              // same NaN: no mismatch
  b[1500] = INFINITY;             // new Inf where A is finite
  a[2100] = b[2100] = -INFINITY;  // same Inf
  a[4999] = NAN;                  // A's NaN, B finite
  b[3000] = NAN;
  ExpectMatches(a, b, 1e-5, 1e-3, 1e-6, 1);
  ExpectMatches(a, b, 1e-5, 1e-3, -1, 1);
}

TEST(KernelF32, LargestToleranceRatioWhereverItLies) {
  // every chunk raises the running maximum, then a single outlier in the last chunk, then
  // ratios that differ from the running maximum only in the last bits of the product
  std::vector<float> a(9000, 1.0f), b(9000);
  for (size_t i = 0; i < a.size(); ++i) b[i] = 1.0f + 1e-6f * float(i % 4096);
  ExpectMatches(a, b, 1e-5, 1e-3, -1, 1);
  b[8999] = 1.5f;
  ExpectMatches(a, b, 1e-5, 1e-3, -1, 1);
  for (size_t i = 0; i < a.size(); ++i) {
    a[i] = 1.0f + std::ldexp(float(i % 97), -20);
    b[i] = std::nextafter(a[i], 2.0f);
  }
  ExpectMatches(a, b, 0, 1e-7, -1, 1);
  // |b-a| = 1 - 2^-30 in the first chunk, then 1 - 2^-31 (larger by 2^-31 relative) later on
  std::fill(a.begin(), a.end(), 0.0f);
  std::fill(b.begin(), b.end(), 0.0f);
  a[10] = std::ldexp(1.0f, -30), b[10] = 1;
  a[5000] = std::ldexp(1.0f, -31), b[5000] = 1;
  ExpectMatches(a, b, 1, 0, -1, 1);
}

TEST(KernelF32, ZeroToleranceRatioIsInfiniteOrUndefined) {
  std::vector<float> a(3000, 0.0f), b(3000, 0.0f);
  ExpectMatches(a, b, 0, 0, -1, 1);  // 0/0 everywhere: ratio 0, nothing mismatches
  b[2500] = 1e-3f;
  ExpectMatches(a, b, 0, 0, -1, 1);  // x/0: infinite
}

TEST(ChunkF32, VectorAndPortablePathsAgree) {
  std::vector<float> a, b;
  Fill(1024 + 13, 3, &a, &b);
  for (size_t n : {0, 1, 5, 8, 12, 1024, 1037}) {
    ChunkF32Params p{1e-4, 1e-5, 1e-3, 0.7};
    ChunkF32 v = SumChunkF32(a.data(), b.data(), n, p);
    ChunkF32 s = SumChunkF32Portable(a.data(), b.data(), n, p);
    SCOPED_TRACE(n);
    EXPECT_EQ(v.mismatches, s.mismatches);
    EXPECT_EQ(v.exact, s.exact);
    EXPECT_EQ(v.above, s.above);
    EXPECT_EQ(v.max_abs, s.max_abs);
    EXPECT_EQ(v.max_rel, s.max_rel);
    EXPECT_EQ(v.min_a, s.min_a);
    EXPECT_EQ(v.max_a, s.max_a);
    EXPECT_EQ(v.min_b, s.min_b);
    EXPECT_EQ(v.max_b, s.max_b);
    for (auto [x, y] : {std::pair{v.sum_a, s.sum_a},
                        {v.sum_b, s.sum_b},
                        {v.dot, s.dot},
                        {v.sq_a, s.sq_a},
                        {v.sq_b, s.sq_b},
                        {v.sum_abs, s.sum_abs},
                        {v.sum_rel, s.sum_rel},
                        {v.sq_diff, s.sq_diff}}) {
      EXPECT_NEAR(x, y, 1e-12 * std::max(1.0, std::fabs(y)));
    }
  }
}

// Differences just below, at and above every histogram edge (x = 0, y = the floats around the
// edge), and random ones over many octaves, binned by the vector and portable paths against
// HistogramBin one element at a time.
TEST(ChunkF32, HistogramBinsAgreeWithHistogramBin) {
  std::vector<float> a, b;
  for (int k = 1; k < kHistBins; ++k) {
    float e = static_cast<float>(HistogramEdge(k));
    for (float y : {std::nextafter(e, 0.0f), e, std::nextafter(e, INFINITY)}) {
      a.push_back(0);
      b.push_back(y);
    }
  }
  std::vector<float> ra, rb;
  Fill(4000, 11, &ra, &rb);
  a.insert(a.end(), ra.begin(), ra.end());
  b.insert(b.end(), rb.begin(), rb.end());
  for (size_t stride : {1, 3, 16}) {
    for (size_t first : {0, 2}) {
      for (double eps : {1.0, 1e-3}) {
        std::vector<uint64_t> want_abs(kHistBins, 0), want_rel(kHistBins, 0);
        uint64_t sampled = 0, zeros = 0;
        for (size_t i = first; i < a.size(); i += stride) {
          double ad = std::fabs(double(b[i]) - double(a[i]));
          ++sampled;
          if (ad == 0) {
            ++zeros;
            continue;
          }
          ++want_abs[HistogramBin(ad)];
          ++want_rel[HistogramBin(ad / (std::fabs(double(a[i])) + eps))];
        }
        SCOPED_TRACE("stride " + std::to_string(stride) + " first " + std::to_string(first));
        for (auto* bin : {&BinChunkF32, &BinChunkF32Portable}) {
          std::vector<uint64_t> abs_h(kHistBins, 0), rel_h(kHistBins, 0);
          ChunkSample got =
              bin(a.data(), b.data(), a.size(), first, stride, eps, abs_h.data(), rel_h.data());
          EXPECT_EQ(got.sampled, sampled);
          EXPECT_EQ(got.zeros, zeros);
          EXPECT_EQ(abs_h, want_abs);
          EXPECT_EQ(rel_h, want_rel);
        }
      }
    }
  }
}

// The exact percentile's second pass: the values in a range, NaN/Inf pairs never among them.
TEST(ChunkF32, CollectTakesExactlyTheValuesInTheRanges) {
  std::vector<float> a, b;
  Fill(3001, 5, &a, &b);
  a[7] = NAN, b[8] = INFINITY, a[9] = b[9] = INFINITY;
  const double eps = 1e-4;
  ValueRange abs_range{1e-6, 1e-4}, rel_range{1e-5, 2e-3};
  std::vector<double> want_abs, want_rel;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!std::isfinite(a[i]) || !std::isfinite(b[i])) continue;
    double ad = std::fabs(double(b[i]) - double(a[i])), rel = ad / (std::fabs(double(a[i])) + eps);
    if (ad >= abs_range.low && ad < abs_range.high) want_abs.push_back(ad);
    if (rel >= rel_range.low && rel < rel_range.high) want_rel.push_back(rel);
  }
  ASSERT_GT(want_abs.size(), 10u);
  ASSERT_GT(want_rel.size(), 10u);
  for (auto* collect : {&CollectF32, &CollectF32Portable}) {
    std::vector<double> got_abs, got_rel;
    collect(a.data(), b.data(), a.size(), eps, abs_range, rel_range, &got_abs, &got_rel);
    EXPECT_EQ(got_abs, want_abs);
    EXPECT_EQ(got_rel, want_rel);
    got_abs.clear();
    collect(a.data(), b.data(), a.size(), eps, ValueRange(), ValueRange(), &got_abs, &got_abs);
    EXPECT_TRUE(got_abs.empty());
  }
}

}  // namespace
}  // namespace onnxprobe
