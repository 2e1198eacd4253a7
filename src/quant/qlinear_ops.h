// Internal: the quantized operators of the QOperator format and the float operator each one
// stands for, with where its activations, weights and output quantization sit among its inputs.
#pragma once

#include <string>
#include <vector>

namespace onnxprobe::quant {

struct QLinearOp {
  const char* op;        // e.g. "QLinearConv"
  const char* float_op;  // e.g. "Conv"
  // B input slot of the float op's input i (-1: none). A weight or activation at slot s has its
  // scale at s + 1 and zero point at s + 2 when `triples`.
  std::vector<int> slots;
  bool triples = true;
  int out_scale = -1, out_zero_point = -1;  // -1: the output is not quantized
  int bias_slot = -1;                       // an int32 bias (scale: input x weight scales)
};

// The QOperator entry for `op_type`, or null (Concat's variadic inputs: slot 2 + 3i).
const QLinearOp* FindQLinearOp(const std::string& op_type);

inline bool IsQ(const std::string& op) { return op == "QuantizeLinear"; }
inline bool IsDQ(const std::string& op) { return op == "DequantizeLinear"; }

}  // namespace onnxprobe::quant
