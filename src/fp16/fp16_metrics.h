// Internal: the float16 measures of one tensor and of one tensor pair.
#pragma once

#include "onnxprobe/fp16/fp16.h"

namespace onnxprobe {

// Fills elements, overflow, subnormal_share, roundtrip_error and max_abs of a float32 tensor.
void MeasureFp16(const Tensor& t, Fp16TensorRow* row);

// A float16 result (cast back to the reference's type) against its float32 reference.
struct PairError {
  double rel_error = 0;    // ||b - a|| / ||a|| over elements finite on both (a = reference)
  double max_abs = 0;      // over elements finite on both
  uint64_t nonfinite = 0;  // finite in a, NaN/Inf in b
  double worst_ratio = 0;  // max |b - a| / (atol + rtol |a|); +inf for a nonfinite element
  bool layout_differs = false;
};
PairError ComparePair(const Tensor& reference, const Tensor& got, double atol, double rtol);

}  // namespace onnxprobe
