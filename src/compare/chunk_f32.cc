// One chunk of the float32 comparison kernel. The AVX2 path runs two loops over the chunk: the
// extremes and exact matches on 8 floats per step, then every sum, error and count on 4 doubles
// per step in one loop whose 11 accumulators stay in registers. That loop is bound by the
// floating-point pipes (about 30 operations per 4 elements: one more accumulator spilled to the
// stack costs 40%), and it prefetches the data of the chunks after it, so memory is read under
// the arithmetic. The portable path runs the same formulas as OpenMP SIMD loops.
#include "compare/chunk_f32.h"

#include <algorithm>
#include <cmath>

#include "onnxprobe/compare/compare.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace onnxprobe {
namespace {

// Scalar: the tails of the AVX2 path, and the formulas every loop follows.
void AddScalar(const float* a, const float* b, size_t n, const ChunkF32Params& p, ChunkF32* s) {
  for (size_t i = 0; i < n; ++i) {
    double x = a[i], y = b[i];
    s->sum_a += x;
    s->sum_b += y;
    s->dot += x * y;
    s->sq_a += x * x;
    s->sq_b += y * y;
    double d = y - x, ad = std::fabs(d), ax = std::fabs(x);
    double rel = ad / (ax + p.eps);
    double allowed = p.atol + p.rtol * ax;
    s->sum_abs += ad;
    s->sum_rel += rel;
    s->sq_diff += d * d;
    s->max_abs = ad > s->max_abs ? ad : s->max_abs;
    s->max_rel = rel > s->max_rel ? rel : s->max_rel;
    s->mismatches += ad > allowed ? 1 : 0;
    s->above += ad > p.raise * allowed ? 1 : 0;
  }
}

// Extremes and exact matches (b == a as floats: |b-a| == 0 in double, -0 == 0 included).
void AddExtremes(const float* a, const float* b, size_t n, ChunkF32* s) {
  for (size_t i = 0; i < n; ++i) {
    s->exact += a[i] == b[i] ? 1 : 0;
    s->min_a = a[i] < s->min_a ? a[i] : s->min_a;
    s->max_a = a[i] > s->max_a ? a[i] : s->max_a;
    s->min_b = b[i] < s->min_b ? b[i] : s->min_b;
    s->max_b = b[i] > s->max_b ? b[i] : s->max_b;
  }
}

ChunkF32 Start() {
  ChunkF32 s;
  s.min_a = s.min_b = INFINITY;
  s.max_a = s.max_b = -INFINITY;
  return s;
}

}  // namespace

ChunkF32 SumChunkF32Portable(const float* a, const float* b, size_t n, const ChunkF32Params& p) {
  ChunkF32 s = Start();
  float mna = s.min_a, mxa = s.max_a, mnb = s.min_b, mxb = s.max_b;
  uint64_t exact = 0;
#pragma omp simd reduction(max : mxa, mxb) reduction(min : mna, mnb) reduction(+ : exact)
  for (size_t i = 0; i < n; ++i) {
    exact += a[i] == b[i] ? 1 : 0;
    mna = a[i] < mna ? a[i] : mna;
    mxa = a[i] > mxa ? a[i] : mxa;
    mnb = b[i] < mnb ? b[i] : mnb;
    mxb = b[i] > mxb ? b[i] : mxb;
  }
  s.min_a = mna, s.max_a = mxa, s.min_b = mnb, s.max_b = mxb;
  double sa = 0, sb = 0, dot = 0, na2 = 0, nb2 = 0;
#pragma omp simd reduction(+ : sa, sb, dot, na2, nb2)
  for (size_t i = 0; i < n; ++i) {
    double x = a[i], y = b[i];
    sa += x;
    sb += y;
    dot += x * y;
    na2 += x * x;
    nb2 += y * y;
  }
  s.sum_a = sa, s.sum_b = sb, s.dot = dot, s.sq_a = na2, s.sq_b = nb2;
  double sum_abs = 0, sum_rel = 0, nd2 = 0, max_abs = 0, max_rel = 0;
  uint64_t mism = 0, above = 0;
  const double eps = p.eps, atol = p.atol, rtol = p.rtol, raise = p.raise;
#pragma omp simd reduction(+ : sum_abs, sum_rel, nd2, mism, above) reduction(max : max_abs, max_rel)
  for (size_t i = 0; i < n; ++i) {
    double x = a[i], y = b[i];
    double d = y - x, ad = std::fabs(d), ax = std::fabs(x);
    double rel = ad / (ax + eps);
    double allowed = atol + rtol * ax;
    sum_abs += ad;
    sum_rel += rel;
    nd2 += d * d;
    max_abs = ad > max_abs ? ad : max_abs;
    max_rel = rel > max_rel ? rel : max_rel;
    mism += ad > allowed ? 1 : 0;
    above += ad > raise * allowed ? 1 : 0;
  }
  s.sum_abs = sum_abs, s.sum_rel = sum_rel, s.sq_diff = nd2, s.max_abs = max_abs;
  s.max_rel = max_rel, s.mismatches = mism, s.exact = exact, s.above = above;
  return s;
}

namespace {

// Bins contiguous pairs (a sample already gathered), one at a time; exact matches are only
// counted.
uint64_t BinPortable(const float* a, const float* b, size_t n, double eps, uint64_t* hist_abs,
                     uint64_t* hist_rel) {
  uint64_t zeros = 0;
  for (size_t i = 0; i < n; ++i) {
    double x = a[i], y = b[i];
    double ad = std::fabs(y - x), rel = ad / (std::fabs(x) + eps);
    if (ad == 0) {
      ++zeros;
      continue;
    }
    ++hist_abs[HistogramBin(ad)];
    ++hist_rel[HistogramBin(rel)];
  }
  return zeros;
}

using BinFn = uint64_t (*)(const float*, const float*, size_t, double, uint64_t*, uint64_t*);

// Gathers a strided sample into short contiguous runs for `bin`.
ChunkSample BinStrided(BinFn bin, const float* a, const float* b, size_t n, size_t first,
                       size_t stride, double eps, uint64_t* hist_abs, uint64_t* hist_rel) {
  ChunkSample out;
  if (first >= n) return out;
  if (stride == 1) {
    out.sampled = n - first;
    out.zeros = bin(a + first, b + first, n - first, eps, hist_abs, hist_rel);
  } else {
    constexpr size_t kRun = 256;
    float xa[kRun], xb[kRun];
    size_t k = 0;
    for (size_t i = first; i < n; i += stride) {
      xa[k] = a[i];
      xb[k] = b[i];
      if (++k < kRun) continue;
      out.zeros += bin(xa, xb, k, eps, hist_abs, hist_rel);
      out.sampled += k;
      k = 0;
    }
    out.zeros += bin(xa, xb, k, eps, hist_abs, hist_rel);
    out.sampled += k;
  }
  return out;
}

}  // namespace

ChunkSample BinChunkF32Portable(const float* a, const float* b, size_t n, size_t first,
                                size_t stride, double eps, uint64_t* hist_abs, uint64_t* hist_rel) {
  return BinStrided(BinPortable, a, b, n, first, stride, eps, hist_abs, hist_rel);
}

// (NaN/Inf pairs fall out by themselves: their |b-a| or relative error is NaN or Inf, and a range
// is finite or ends at +Inf, exclusive.)
void CollectF32Portable(const float* a, const float* b, size_t n, double eps, ValueRange abs_range,
                        ValueRange rel_range, std::vector<double>* abs_out,
                        std::vector<double>* rel_out) {
  for (size_t i = 0; i < n; ++i) {
    double x = a[i], y = b[i];
    double ad = std::fabs(y - x), rel = ad / (std::fabs(x) + eps);
    if (ad >= abs_range.low && ad < abs_range.high) abs_out->push_back(ad);
    if (rel >= rel_range.low && rel < rel_range.high) rel_out->push_back(rel);
  }
}

namespace {

#if defined(__x86_64__)
// AVX2 and FMA, with the OS saving AVX state (cpuid and xgetbv, as for F16C in fp16/).
bool HasAvx2Fma() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
  if (!((c >> 27) & 1u) || !((c >> 28) & 1u) || !((c >> 12) & 1u)) return false;  // OSXSAVE AVX FMA
  unsigned lo = 0, hi = 0;
  __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  if ((lo & 0x6u) != 0x6u) return false;
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
  return (b >> 5) & 1u;
}

constexpr uintptr_t kPrefetchBytes = 8192;

// For each 4-bit mask of 64-bit lanes, the 32-bit lanes that move the low halves of the lanes
// set to the front (a left-pack with _mm256_permutevar8x32_epi32).
struct PackLanes {
  alignas(32) int32_t idx[16][8] = {};
  PackLanes() {
    for (int mask = 0; mask < 16; ++mask) {
      int k = 0;
      for (int lane = 0; lane < 4; ++lane)
        if (mask >> lane & 1) idx[mask][k++] = 2 * lane;
    }
  }
};

// next_edge[j] = 2^((j+1)/8), the upper edge of the j-th bin of an octave scaled to [1, 2]
struct NextEdges {
  double v[kHistPerOctave];
  NextEdges() {
    for (int j = 0; j < kHistPerOctave; ++j) v[j] = std::ldexp(HistogramEdge(j + 1), -kHistMinExp);
  }
};
constexpr uint8_t kBits4[16] = {0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4};

#define ONNXPROBE_AVX2 __attribute__((target("avx2,fma")))
// GCC would fuse a multiply and an add into one FMA on its own (-ffp-contract=fast), which
// rounds once instead of twice: atol + rtol*|a| must round as numpy's does. Clang fuses only
// within one source expression, and the intrinsics below are separate ones.
#if defined(__GNUC__) && !defined(__clang__)
#define ONNXPROBE_NO_CONTRACT __attribute__((optimize("fp-contract=off")))
#else
#define ONNXPROBE_NO_CONTRACT
#endif

ONNXPROBE_AVX2 double Sum4(__m256d v) {
  __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
  return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

ONNXPROBE_AVX2 double Max4(__m256d v) {
  alignas(32) double t[4];
  _mm256_store_pd(t, v);
  double m = t[0];
  for (int k = 1; k < 4; ++k) m = t[k] > m ? t[k] : m;
  return m;
}

// Two counts per 64-bit lane, each the negated sum of all-ones 32-bit masks: `hi` selects which.
ONNXPROBE_AVX2 uint64_t Count4(__m256i v, bool hi) {
  alignas(32) int32_t t[8];
  _mm256_store_si256(reinterpret_cast<__m256i*>(t), v);
  int64_t sum = 0;
  for (int k = hi ? 1 : 0; k < 8; k += 2) sum += t[k];
  return static_cast<uint64_t>(-sum);
}

ONNXPROBE_AVX2 ONNXPROBE_NO_CONTRACT ChunkF32 SumAvx2(const float* a, const float* b, size_t n,
                                                      const ChunkF32Params& p) {
  ChunkF32 s = Start();
  // extremes and exact matches, 8 floats per step (this loop also brings the chunk into L1)
  __m256 mna = _mm256_set1_ps(INFINITY), mxa = _mm256_set1_ps(-INFINITY), mnb = mna, mxb = mxa;
  uint64_t exact = 0;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m256 va = _mm256_loadu_ps(a + i), vb = _mm256_loadu_ps(b + i);
    int eq = _mm256_movemask_ps(_mm256_cmp_ps(va, vb, _CMP_EQ_OQ));
    exact += kBits4[eq & 15] + kBits4[eq >> 4];
    mna = _mm256_min_ps(va, mna);
    mxa = _mm256_max_ps(va, mxa);
    mnb = _mm256_min_ps(vb, mnb);
    mxb = _mm256_max_ps(vb, mxb);
  }
  alignas(32) float t[4][8];
  _mm256_store_ps(t[0], mna);
  _mm256_store_ps(t[1], mxa);
  _mm256_store_ps(t[2], mnb);
  _mm256_store_ps(t[3], mxb);
  for (int k = 0; k < 8; ++k) {
    s.min_a = t[0][k] < s.min_a ? t[0][k] : s.min_a;
    s.max_a = t[1][k] > s.max_a ? t[1][k] : s.max_a;
    s.min_b = t[2][k] < s.min_b ? t[2][k] : s.min_b;
    s.max_b = t[3][k] > s.max_b ? t[3][k] : s.max_b;
  }
  s.exact = exact;
  AddExtremes(a + i, b + i, n - i, &s);

  // everything else, 4 doubles per step. The products of two floats are exact in double, so
  // an FMA adds them exactly as a multiply and an add would.
  const __m256d abs_mask = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffLL));
  const __m256d eps = _mm256_set1_pd(p.eps), atol = _mm256_set1_pd(p.atol);
  const __m256d rtol = _mm256_set1_pd(p.rtol), raise = _mm256_set1_pd(p.raise);
  const __m256d zero = _mm256_setzero_pd();
  __m256d sa = zero, sb = zero, dot = zero, na2 = zero, nb2 = zero;
  __m256d sum_abs = zero, sum_rel = zero, nd2 = zero, max_abs = zero, max_rel = zero;
  __m256i counts = _mm256_setzero_si256();  // per lane: mismatches (low half), above (high)
  i = 0;
  // what comes 8 KB later streams in under this loop's arithmetic (the hardware prefetcher stops
  // at page boundaries and the loop above finds the next chunk in memory otherwise; a prefetch
  // never faults, also past the end of the tensor)
  const uintptr_t ahead_a = reinterpret_cast<uintptr_t>(a) + kPrefetchBytes;
  const uintptr_t ahead_b = reinterpret_cast<uintptr_t>(b) + kPrefetchBytes;
  for (; i + 4 <= n; i += 4) {
    _mm_prefetch(reinterpret_cast<const char*>(ahead_a + 4 * i), _MM_HINT_T0);
    _mm_prefetch(reinterpret_cast<const char*>(ahead_b + 4 * i), _MM_HINT_T0);
    __m256d x = _mm256_cvtps_pd(_mm_loadu_ps(a + i));
    __m256d y = _mm256_cvtps_pd(_mm_loadu_ps(b + i));
    sa = _mm256_add_pd(sa, x);
    sb = _mm256_add_pd(sb, y);
    dot = _mm256_fmadd_pd(x, y, dot);
    na2 = _mm256_fmadd_pd(x, x, na2);
    nb2 = _mm256_fmadd_pd(y, y, nb2);
    __m256d d = _mm256_sub_pd(y, x);
    __m256d ad = _mm256_and_pd(d, abs_mask), ax = _mm256_and_pd(x, abs_mask);
    __m256d rel = _mm256_div_pd(ad, _mm256_add_pd(ax, eps));
    __m256d allowed = _mm256_add_pd(atol, _mm256_mul_pd(rtol, ax));
    sum_abs = _mm256_add_pd(sum_abs, ad);
    sum_rel = _mm256_add_pd(sum_rel, rel);
    nd2 = _mm256_add_pd(nd2, _mm256_mul_pd(d, d));
    max_abs = _mm256_max_pd(ad, max_abs);
    max_rel = _mm256_max_pd(rel, max_rel);
    __m256i mism = _mm256_castpd_si256(_mm256_cmp_pd(ad, allowed, _CMP_GT_OQ));
    __m256i above =
        _mm256_castpd_si256(_mm256_cmp_pd(ad, _mm256_mul_pd(raise, allowed), _CMP_GT_OQ));
    counts = _mm256_add_epi32(counts, _mm256_blend_epi32(mism, above, 0xaa));
  }
  s.sum_a = Sum4(sa), s.sum_b = Sum4(sb), s.dot = Sum4(dot), s.sq_a = Sum4(na2);
  s.sq_b = Sum4(nb2), s.sum_abs = Sum4(sum_abs), s.sum_rel = Sum4(sum_rel), s.sq_diff = Sum4(nd2);
  s.max_abs = Max4(max_abs), s.max_rel = Max4(max_rel);
  s.mismatches = Count4(counts, false), s.above = Count4(counts, true);
  AddScalar(a + i, b + i, n - i, p, &s);
  return s;
}

// HistogramBin of 4 finite values >= 0 at once: the octave from the exponent bits, the bin
// inside it from the top 3 mantissa bits and one comparison with the next edge (see Bin in
// metrics.cc), clamped to the first and last bins.
ONNXPROBE_AVX2 inline __attribute__((always_inline)) __m256i Bin4(__m256d v,
                                                                  const double* next_edge) {
  const __m256i bits = _mm256_castpd_si256(v);
  const __m256i j = _mm256_and_si256(_mm256_srli_epi64(bits, 49), _mm256_set1_epi64x(7));
  const __m256d m = _mm256_castsi256_pd(
      _mm256_or_si256(_mm256_and_si256(bits, _mm256_set1_epi64x((int64_t(1) << 52) - 1)),
                      _mm256_set1_epi64x(int64_t(1023) << 52)));
  // next_edge[j] without a gather: two 8-entry tables of 32-bit halves, permuted by 2j and 2j+1,
  // the table of j >= 4 chosen by bit 2 of j
  const __m256i two_j = _mm256_slli_epi64(j, 1);
  const __m256i halves =
      _mm256_or_si256(two_j, _mm256_slli_epi64(_mm256_add_epi64(two_j, _mm256_set1_epi64x(1)), 32));
  const __m256 low4 = _mm256_loadu_ps(reinterpret_cast<const float*>(next_edge));
  const __m256 high4 = _mm256_loadu_ps(reinterpret_cast<const float*>(next_edge + 4));
  const __m256d edge = _mm256_blendv_pd(_mm256_castps_pd(_mm256_permutevar8x32_ps(low4, halves)),
                                        _mm256_castps_pd(_mm256_permutevar8x32_ps(high4, halves)),
                                        _mm256_castsi256_pd(_mm256_slli_epi64(j, 61)));
  const __m256i up = _mm256_castpd_si256(_mm256_cmp_pd(m, edge, _CMP_GE_OQ));  // -1: next bin
  const __m256i octave =
      _mm256_sub_epi64(_mm256_srli_epi64(bits, 52), _mm256_set1_epi64x(1023 + kHistMinExp));
  __m256i bin = _mm256_sub_epi64(_mm256_add_epi64(_mm256_slli_epi64(octave, 3), j), up);
  const __m256i last = _mm256_set1_epi64x(kHistBins - 1);
  bin = _mm256_andnot_si256(_mm256_cmpgt_epi64(_mm256_setzero_si256(), bin), bin);
  return _mm256_blendv_epi8(bin, last, _mm256_cmpgt_epi64(bin, last));
}

// Bins in two steps: the bins of a run of elements computed 4 at a time and packed into small
// arrays, exact matches left out (identical tensors, the common case, skip the binning
// altogether), then the counters incremented from there (reading a bin back right after a vector
// store of it would stall on store forwarding; reading it a run later does not).
ONNXPROBE_AVX2 ONNXPROBE_NO_CONTRACT uint64_t BinAvx2(const float* a, const float* b, size_t n,
                                                      double eps_in, uint64_t* hist_abs,
                                                      uint64_t* hist_rel) {
  static const NextEdges edges;
  constexpr size_t kRun = 256;
  const __m256d abs_mask = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffLL));
  const __m256d eps = _mm256_set1_pd(eps_in), zero = _mm256_setzero_pd();
  static const PackLanes pack;
  alignas(32) int32_t ka[kRun + 4], kr[kRun + 4];
  uint64_t zeros = 0;
  size_t i = 0;
  while (i + 4 <= n) {
    size_t len = std::min(kRun, (n - i) / 4 * 4), packed = 0;
    for (size_t k = 0; k < len; k += 4) {
      __m256d x = _mm256_cvtps_pd(_mm_loadu_ps(a + i + k));
      __m256d y = _mm256_cvtps_pd(_mm_loadu_ps(b + i + k));
      __m256d ad = _mm256_and_pd(_mm256_sub_pd(y, x), abs_mask);
      __m256d rel = _mm256_div_pd(ad, _mm256_add_pd(_mm256_and_pd(x, abs_mask), eps));
      const int exact = _mm256_movemask_pd(_mm256_cmp_pd(ad, zero, _CMP_EQ_OQ));
      zeros += kBits4[exact];
      if (exact == 15) continue;
      const __m256i to =  // the nonzero ones' 32-bit halves, in front
          _mm256_load_si256(reinterpret_cast<const __m256i*>(pack.idx[exact ^ 15]));
      __m256i ba = _mm256_permutevar8x32_epi32(Bin4(ad, edges.v), to);
      __m256i br = _mm256_permutevar8x32_epi32(Bin4(rel, edges.v), to);
      _mm_storeu_si128(reinterpret_cast<__m128i*>(ka + packed), _mm256_castsi256_si128(ba));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(kr + packed), _mm256_castsi256_si128(br));
      packed += kBits4[exact ^ 15];
    }
    for (size_t k = 0; k < packed; ++k) {
      ++hist_abs[ka[k]];
      ++hist_rel[kr[k]];
    }
    i += len;
  }
  return zeros + BinPortable(a + i, b + i, n - i, eps_in, hist_abs, hist_rel);
}

// 4 pairs at a time; the rare ones in a range are taken one by one.
ONNXPROBE_AVX2 ONNXPROBE_NO_CONTRACT void CollectAvx2(const float* a, const float* b, size_t n,
                                                      double eps_in, ValueRange abs_range,
                                                      ValueRange rel_range,
                                                      std::vector<double>* abs_out,
                                                      std::vector<double>* rel_out) {
  const __m256d abs_mask = _mm256_castsi256_pd(_mm256_set1_epi64x(0x7fffffffffffffffLL));
  const __m256d eps = _mm256_set1_pd(eps_in);
  const __m256d alo = _mm256_set1_pd(abs_range.low), ahi = _mm256_set1_pd(abs_range.high);
  const __m256d rlo = _mm256_set1_pd(rel_range.low), rhi = _mm256_set1_pd(rel_range.high);
  alignas(32) double ad4[4], rel4[4];
  size_t i = 0;
  for (; i + 4 <= n; i += 4) {
    __m256d x = _mm256_cvtps_pd(_mm_loadu_ps(a + i));
    __m256d y = _mm256_cvtps_pd(_mm_loadu_ps(b + i));
    __m256d ad = _mm256_and_pd(_mm256_sub_pd(y, x), abs_mask);
    __m256d rel = _mm256_div_pd(ad, _mm256_add_pd(_mm256_and_pd(x, abs_mask), eps));
    int in_abs = _mm256_movemask_pd(
        _mm256_and_pd(_mm256_cmp_pd(ad, alo, _CMP_GE_OQ), _mm256_cmp_pd(ad, ahi, _CMP_LT_OQ)));
    int in_rel = _mm256_movemask_pd(
        _mm256_and_pd(_mm256_cmp_pd(rel, rlo, _CMP_GE_OQ), _mm256_cmp_pd(rel, rhi, _CMP_LT_OQ)));
    if ((in_abs | in_rel) == 0) continue;
    _mm256_store_pd(ad4, ad);
    _mm256_store_pd(rel4, rel);
    for (int k = 0; k < 4; ++k) {
      if (in_abs >> k & 1) abs_out->push_back(ad4[k]);
      if (in_rel >> k & 1) rel_out->push_back(rel4[k]);
    }
  }
  CollectF32Portable(a + i, b + i, n - i, eps_in, abs_range, rel_range, abs_out, rel_out);
}
#endif

}  // namespace

ChunkF32 SumChunkF32(const float* a, const float* b, size_t n, const ChunkF32Params& p) {
#if defined(__x86_64__)
  static const bool avx2 = HasAvx2Fma();
  if (avx2) return SumAvx2(a, b, n, p);
#endif
  return SumChunkF32Portable(a, b, n, p);
}

void CollectF32(const float* a, const float* b, size_t n, double eps, ValueRange abs_range,
                ValueRange rel_range, std::vector<double>* abs_out, std::vector<double>* rel_out) {
#if defined(__x86_64__)
  static const bool avx2 = HasAvx2Fma();
  if (avx2) return CollectAvx2(a, b, n, eps, abs_range, rel_range, abs_out, rel_out);
#endif
  CollectF32Portable(a, b, n, eps, abs_range, rel_range, abs_out, rel_out);
}

ChunkSample BinChunkF32(const float* a, const float* b, size_t n, size_t first, size_t stride,
                        double eps, uint64_t* hist_abs, uint64_t* hist_rel) {
#if defined(__x86_64__)
  static const bool avx2 = HasAvx2Fma();
  if (avx2) return BinStrided(BinAvx2, a, b, n, first, stride, eps, hist_abs, hist_rel);
#endif
  return BinChunkF32Portable(a, b, n, first, stride, eps, hist_abs, hist_rel);
}

}  // namespace onnxprobe
