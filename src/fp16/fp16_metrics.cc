// What float16 does to values: |x| > 65504 becomes Inf, nonzero |x| < 2^-14 loses precision
// (subnormal) or becomes 0, and the rest is rounded to 11 significant bits.
#include "fp16/fp16_metrics.h"

#include <cmath>
#include <limits>

namespace onnxprobe {
namespace {

constexpr double kFp16Max = 65504.0;
constexpr double kFp16MinNormal = 6.103515625e-05;  // 2^-14

}  // namespace

void MeasureFp16(const Tensor& t, Fp16TensorRow* row) {
  row->elements = t.num_elements();
  if (t.dtype() != DType::kFloat32) return;
  const float* x = t.data_as<float>();
  uint64_t nonzero = 0, small = 0;
  double err2 = 0, ref2 = 0, max_abs = 0;
  for (uint64_t i = 0; i < t.num_elements(); ++i) {
    float v = x[i];
    if (!std::isfinite(v)) continue;
    double a = std::fabs(static_cast<double>(v));
    max_abs = std::max(max_abs, a);
    if (a > kFp16Max) {
      ++row->overflow;
      continue;
    }
    if (a != 0) {
      ++nonzero;
      if (a < kFp16MinNormal) ++small;
    }
    double r = HalfToFloat(FloatToHalf(v));
    if (!std::isfinite(r)) {  // rounds up past 65504
      ++row->overflow;
      continue;
    }
    err2 += (r - v) * (r - v);
    ref2 += static_cast<double>(v) * v;
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
  for (uint64_t i = 0; i < n; ++i) {
    double x = ElementAsDouble(a, i), y = ElementAsDouble(b, i);
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
