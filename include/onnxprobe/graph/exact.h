// The exact reference: a model computed in float64 (BuildExactModel), and how each node's value
// is computed there. ONNX Runtime's CPU provider has float64 kernels for most ops but not for
// Conv, Erf, GlobalAveragePool and others: Conv becomes an im2col (Pad, Slices, Concat) and a
// float64 MatMul; a list of ops runs on onnxprobe's own float64 kernels (domain kExactDomain,
// backend/ort/exact_kernels.cc); any other op whose runtime has no float64 kernel runs in float32
// between Casts and is named as such (not exact).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "onnxprobe/model/model.h"

namespace onnxprobe {

// The custom-op domain of onnxprobe's float64 kernels (SessionOptions::exact_kernels).
inline constexpr char kExactDomain[] = "ai.onnxprobe.exact";

// The ONNX ops (default domain) onnxprobe has float64 kernels of its own for.
const std::set<std::string>& OwnExactKernelOps();

enum class ExactMethod {
  kFloat64Kernel,  // the runtime's own float64 kernel
  kConvAsMatMul,   // a Conv rewritten into Pad, Slices, Concat and a float64 MatMul
  kOwnKernel,      // onnxprobe's float64 kernel
  kQdqAsFloat64,   // a QuantizeLinear/DequantizeLinear rewritten into float64 ops (Cast, Sub, Mul;
                   // Div, Round, Add, Clip, Cast)
  kFloat32,        // no float64 kernel: computed in float32 between Casts (not exact)
};
// "float64 kernel", "im2col + float64 MatMul", "onnxprobe float64 kernel", "float64 ops",
// "float32 (no float64 kernel)".
const char* ExactMethodName(ExactMethod m);

struct ExactNode {
  std::string node, op_type;
  ExactMethod method = ExactMethod::kFloat64Kernel;
  std::string why;  // kFloat32: why it could not be computed in float64
};

struct ExactModel {
  std::string bytes;  // the serialized float64 model
  // Every node that computes floating-point values, in file order (main graph and bodies), with
  // how its float64 value is computed.
  std::vector<ExactNode> nodes;
  size_t Count(ExactMethod m) const;
  // One line: "exact reference: 51 nodes in float64 kernels, 53 Conv as im2col + float64 MatMul,
  // 1 on onnxprobe float64 kernels, 0 in float32".
  std::string Summary() const;
};

// `model` with every floating-point tensor in float64: Constant values and the weights of
// If/Loop bodies converted (exactly: float32, float16 and bfloat16 are all float64 numbers),
// Casts to a float type cast to float64, graph outputs float64. Graph inputs keep their types and
// are cast to float64 where read, so the exact model takes the inputs the original takes, and
// every tensor keeps its name. Nodes named in `float32_nodes` (or whose op has no float64 kernel we
// know of) run in float32 between Casts. The main graph's weights stay as the file holds them
// (large ones references into it, as Model::Derived resolves them) and are cast to float64 where
// read, like the graph inputs: the copy costs its graph, not a second set of weights. Fails
// (kUnsupported) on an opset older than 11.
Expected<ExactModel> BuildExactModel(const Model& model,
                                     const std::set<std::string>& float32_nodes = {});

// Whether `name` is a tensor BuildExactModel made (an input's float64 Cast, a float32 copy around
// a node without a float64 kernel, a Conv's im2col): not a tensor of the original model.
bool IsExactHelperTensor(const std::string& name);

}  // namespace onnxprobe
