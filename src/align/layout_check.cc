// A candidate of the right dtype and shape that holds the reference's values in another order:
// a square activation before and after a transpose the exporter moved into the next module's
// nodes has one type on both sides, and the type alone pairs the wrong one.
#include <algorithm>
#include <cmath>
#include <vector>

#include "align/evidence.h"

namespace onnxprobe::align {
namespace {

// Relative L2 distance between two equally long vectors, in their order.
double Relative(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (b[i] - a[i]) * (b[i] - a[i]);
    den += a[i] * a[i];
  }
  if (!std::isfinite(num) || !std::isfinite(den)) return HUGE_VAL;
  if (den == 0) return num == 0 ? 0 : 1;
  return std::sqrt(num / den);
}

}  // namespace

bool SameValuesOtherLayout(const Tensor& reference, const Tensor& candidate, double* in_order,
                           double* as_sets) {
  *in_order = *as_sets = HUGE_VAL;
  if (reference.empty() || candidate.empty() || reference.dtype() != candidate.dtype() ||
      reference.num_elements() != candidate.num_elements())
    return false;
  const uint64_t n = reference.num_elements();
  std::vector<double> a(n), b(n);
  for (uint64_t i = 0; i < n; ++i) {
    a[i] = ElementAsDouble(reference, i);
    b[i] = ElementAsDouble(candidate, i);
  }
  *in_order = Relative(a, b);
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  *as_sets = Relative(a, b);
  // the sorted distance never exceeds the elementwise one; a numeric error moves values, so it
  // shows in both; a permutation shows only in order
  return *in_order > 0.1 && *as_sets < 1e-3 && *as_sets < 0.01 * *in_order;
}

}  // namespace onnxprobe::align
