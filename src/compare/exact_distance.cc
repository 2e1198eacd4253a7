// A side's distance from the exact reference, and the budget it gives a row (compare.h).
#include <algorithm>
#include <cmath>

#include "onnxprobe/compare/compare.h"

namespace onnxprobe {
namespace {

// Magnitudes from here on are fill values (a mask's -3.4e38), not computed ones (as the
// tolerance's scale and the PyTorch float64 measurement leave them out).
constexpr double kFillMagnitude = 1e30;

template <typename GetS, typename GetE>
double MaxDistance(uint64_t n, GetS s, GetE e) {
  double worst = 0;
  for (uint64_t i = 0; i < n; ++i) {
    double x = s(i), y = e(i);
    if (!std::isfinite(x) || !std::isfinite(y) || std::fabs(x) >= kFillMagnitude ||
        std::fabs(y) >= kFillMagnitude)
      continue;
    worst = std::max(worst, std::fabs(x - y));
  }
  return worst;
}

}  // namespace

double DistanceFromExact(const Tensor& side, const Tensor& exact) {
  if (side.num_elements() != exact.num_elements() || !IsFloating(side.dtype()) ||
      !IsFloating(exact.dtype()))
    return -1;
  const uint64_t n = side.num_elements();
  if (side.dtype() == DType::kFloat32 && exact.dtype() == DType::kFloat64) {
    const float* s = side.data_as<float>();
    const double* e = exact.data_as<double>();
    return MaxDistance(
        n, [s](uint64_t i) { return static_cast<double>(s[i]); }, [e](uint64_t i) { return e[i]; });
  }
  return MaxDistance(
      n, [&](uint64_t i) { return ElementAsDouble(side, i); },
      [&](uint64_t i) { return ElementAsDouble(exact, i); });
}

double UnitRoundoff(DType t) {
  switch (t) {
    case DType::kFloat16:
      return 0x1p-11;
    case DType::kBFloat16:
      return 0x1p-8;
    case DType::kFloat64:
      return 0x1p-53;
    default:
      return 0x1p-24;
  }
}

Tolerance ExactRoundingBudget(Tolerance t, double error_a, double error_b, double u_a, double u_b) {
  if (error_a < 0 || error_b < 0 || !(u_a > 0) || !(u_b > 0)) return t;
  const double factor = std::min(error_a / u_a, error_b / u_b);
  // |a - b| <= error_a + error_b ~ factor * (u_a + u_b) <= 2 * factor * max(u_a, u_b); float32 on
  // both sides: 2 * min(error_a, error_b), the PyTorch rule's floor
  const double budget = kFloat32RoundingSum * factor * std::max(u_a, u_b);
  if (!(budget > 0)) return t;
  t.float64_error = std::min(error_a, error_b);
  t.noise_floor = std::max(t.noise_floor, budget);
  return t;
}

}  // namespace onnxprobe
