// Internal: quantization figures of a pair of tensors and the quantization-aware rule.
#pragma once

#include "onnxprobe/engine/comparison.h"
#include "onnxprobe/quant/quant.h"

namespace onnxprobe::quant {

// B's real values `b` against A's float `a`; `p` (may be null) is B's quantization of the tensor.
QuantRowMetrics MeasureRow(const Tensor& a, const Tensor& b, const QuantParams* p);

// The quantization-aware rule: a compared row passes when its SQNR is at least `min_sqnr_db`
// (shape, dtype and NaN/Inf checks of JudgeRow still apply). Sets within_tolerance, pass,
// reason and tolerance_ratio (noise amplitude / allowed noise amplitude).
void JudgeQuantRow(const QuantRowMetrics& q, double min_sqnr_db, TensorResult* row);

double SqnrDb(double signal, double noise);

}  // namespace onnxprobe::quant
