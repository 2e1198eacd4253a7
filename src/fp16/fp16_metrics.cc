// What float16 does to values: |x| > 65504 becomes Inf, nonzero |x| < 2^-14 loses precision
// (subnormal) or becomes 0, and the rest is rounded to 11 significant bits.
#include "fp16/fp16_metrics.h"

#include <cmath>
#include <limits>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace onnxprobe {
namespace {

constexpr double kFp16MinNormal = 6.103515625e-05;  // 2^-14

void RoundTripPortable(const float* in, float* out, size_t n) {
  for (size_t i = 0; i < n; ++i) out[i] = HalfToFloat(FloatToHalf(in[i]));
}

#if defined(__x86_64__)
// F16C and AVX, with the OS saving AVX state (cpuid and xgetbv: works with GCC and clang alike,
// unlike __builtin_cpu_supports("f16c"), which clang does not know).
bool HasF16c() {
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return false;
  const bool osxsave = (c >> 27) & 1u, avx = (c >> 28) & 1u, f16c = (c >> 29) & 1u;
  if (!osxsave || !avx || !f16c) return false;
  unsigned lo = 0, hi = 0;
  __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (lo & 0x6u) == 0x6u;  // SSE and AVX state enabled
}

// The same rounding (to nearest even) in hardware, 8 values at a time.
__attribute__((target("avx,f16c"))) void RoundTripF16c(const float* in, float* out, size_t n) {
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    __m128i h = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT);
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
  }
  RoundTripPortable(in + i, out + i, n - i);
}
#endif

// out[i] = float(float16(in[i])).
void RoundTrip(const float* in, float* out, size_t n) {
#if defined(__x86_64__)
  static const bool f16c = HasF16c();
  if (f16c) return RoundTripF16c(in, out, n);
#endif
  RoundTripPortable(in, out, n);
}

}  // namespace

void MeasureFp16(const Tensor& t, Fp16TensorRow* row) {
  row->elements = t.num_elements();
  if (t.dtype() != DType::kFloat32) return;
  const float* x = t.data_as<float>();
  uint64_t nonzero = 0, small = 0;
  double err2 = 0, ref2 = 0, max_abs = 0;
  constexpr size_t kChunk = 4096;
  float rounded[kChunk];
  for (uint64_t base = 0; base < t.num_elements(); base += kChunk) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, t.num_elements() - base));
    RoundTrip(x + base, rounded, n);
    for (size_t k = 0; k < n; ++k) {
      float v = x[base + k];
      if (!std::isfinite(v)) continue;
      double a = std::fabs(static_cast<double>(v));
      max_abs = std::max(max_abs, a);
      double r = rounded[k];
      if (!std::isfinite(r)) {  // at or beyond 65520, which rounds past 65504
        ++row->overflow;
        continue;
      }
      if (a != 0) {
        ++nonzero;
        small += a < kFp16MinNormal;
      }
      err2 += (r - v) * (r - v);
      ref2 += static_cast<double>(v) * v;
    }
  }
  row->max_abs = max_abs;
  row->subnormal_share = nonzero == 0 ? 0 : static_cast<double>(small) / nonzero;
  row->roundtrip_error = ref2 == 0 ? 0 : std::sqrt(err2 / ref2);
}

PairError ComparePair(const Tensor& a, const Tensor& b, double atol, double rtol) {
  PairError e;
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) {
    e.layout_differs = true;
    e.rel_error = e.worst_ratio = std::numeric_limits<double>::infinity();
    return e;
  }
  uint64_t n = a.num_elements();
  if (!IsFloating(a.dtype())) {
    uint64_t differ = 0;
    for (uint64_t i = 0; i < n; ++i) differ += ElementAsDouble(a, i) != ElementAsDouble(b, i);
    e.rel_error = n == 0 ? 0 : static_cast<double>(differ) / n;
    e.worst_ratio = differ ? std::numeric_limits<double>::infinity() : 0;
    return e;
  }
  double err2 = 0, ref2 = 0;
  bool f32 = a.dtype() == DType::kFloat32;
  const float* fa = a.data_as<float>();
  const float* fb = b.data_as<float>();
  for (uint64_t i = 0; i < n; ++i) {
    double x = f32 ? fa[i] : ElementAsDouble(a, i);
    double y = f32 ? fb[i] : ElementAsDouble(b, i);
    if (!std::isfinite(x)) {
      bool same = (std::isnan(x) && std::isnan(y)) || x == y;
      if (!same) e.worst_ratio = std::numeric_limits<double>::infinity();
      continue;
    }
    if (!std::isfinite(y)) {
      ++e.nonfinite;
      e.worst_ratio = std::numeric_limits<double>::infinity();
      continue;
    }
    double d = std::fabs(y - x);
    e.max_abs = std::max(e.max_abs, d);
    err2 += d * d;
    ref2 += x * x;
    double allowed = atol + rtol * std::fabs(x);
    double ratio =
        allowed > 0 ? d / allowed : (d > 0 ? std::numeric_limits<double>::infinity() : 0);
    e.worst_ratio = std::max(e.worst_ratio, ratio);
  }
  e.rel_error = ref2 > 0 ? std::sqrt(err2 / ref2) : (err2 > 0 ? std::sqrt(err2) : 0);
  return e;
}

}  // namespace onnxprobe
