#include "quant/qlinear_ops.h"

namespace onnxprobe::quant {

const QLinearOp* FindQLinearOp(const std::string& op_type) {
  static const QLinearOp kOps[] = {
      {"QLinearConv", "Conv", {0, 3, 8}, true, 6, 7, 8},
      {"QLinearMatMul", "MatMul", {0, 3}, true, 6, 7},
      {"QGemm", "Gemm", {0, 3, 6}, true, 7, 8, 6},
      {"QLinearAdd", "Add", {0, 3}, true, 6, 7},
      {"QLinearMul", "Mul", {0, 3}, true, 6, 7},
      {"QLinearGlobalAveragePool", "GlobalAveragePool", {0}, true, 3, 4},
      {"QLinearAveragePool", "AveragePool", {0}, true, 3, 4},
      {"QLinearSigmoid", "Sigmoid", {0}, true, 3, 4},
      {"QLinearLeakyRelu", "LeakyRelu", {0}, true, 3, 4},
      {"QLinearSoftmax", "Softmax", {0}, true, 3, 4},
      {"QLinearReduceMean", "ReduceMean", {0}, true, 3, 4},
      {"QLinearConcat", "Concat", {}, true, 0, 1},
      {"MatMulInteger", "MatMul", {0, 1}, false, -1, -1},
      {"ConvInteger", "Conv", {0, 1}, false, -1, -1},
  };
  for (const auto& o : kOps) {
    if (op_type == o.op) return &o;
  }
  return nullptr;
}

}  // namespace onnxprobe::quant
