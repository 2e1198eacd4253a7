// Internal: QuantizeLinear and DequantizeLinear computed in float64 from ops the runtime has
// float64 kernels for (exact_model).
#pragma once

#include <string>
#include <vector>

#include "graph/exact_conv.h"

namespace onnxprobe {

// Appends to `out` the nodes computing `node` (a DequantizeLinear or QuantizeLinear of the ONNX
// domain whose float tensors are already float64) in float64, the last one writing its output:
//   DequantizeLinear: (Cast(x) - Cast(zero_point)) * scale, exact (integers and a float32 scale
//     are float64 numbers, and their product rounds once, at float64);
//   QuantizeLinear: Cast(Clip(Round(x / scale) + Cast(zero_point), lo, hi)) with the output
//     type's range [lo, hi], Round halving to even as the operator does.
// A per-axis scale (and zero point) is reshaped to broadcast along `axis`. False with `why` for
// what it does not take: blocked quantization (block_size), 4-bit and float8 types, an input of
// unknown rank with a per-axis scale.
bool QdqAsFloat64(const onnx::NodeProto& node, const ShapeTable& shapes,
                  std::vector<onnx::NodeProto>* out, std::string* why);

}  // namespace onnxprobe
