// Internal: a Conv computed in float64 from ops the runtime has float64 kernels for (exact_model).
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <unordered_map>
#include <vector>

namespace onnxprobe {

struct TypedShape {
  int elem_type = 0;
  bool rank_known = false;
  std::vector<int64_t> dims;  // -1: unknown
};
using ShapeTable = std::unordered_map<std::string, TypedShape>;

// Appends nodes to `out`, each named "<prefix><what>": the graph passes of the exact model
// (ConvAsMatMul, QdqAsFloat64) build their float64 rewrites with it.
class Emit {
 public:
  Emit(const std::string& prefix, std::vector<onnx::NodeProto>* out);
  // A node writing "<prefix><what>" (or `output` when given); returns its output.
  std::string Node(const std::string& op, const std::string& what,
                   const std::vector<std::string>& inputs, const std::string& output = "");
  // An attribute of the last node.
  void IntAttr(const std::string& name, int64_t v);
  void IntsAttr(const std::string& name, const std::vector<int64_t>& v);
  // Constant nodes: a 1-D int64 tensor, a float64 scalar.
  std::string Ints(const std::string& what, const std::vector<int64_t>& v);
  std::string Double(const std::string& what, double v);

 private:
  onnx::TensorProto* ConstantNode(const std::string& what, std::string* output);
  std::string p_;
  std::vector<onnx::NodeProto>* out_;
};

// Appends to `out` the nodes computing Conv `conv` (its tensors already float64) as an im2col and
// one MatMul: the input padded (Pad), one strided Slice per kernel position, concatenated per
// group into [N, G, K*C/G, P]; the weight [M, C/G, k...] reordered to [G, M/G, K*C/G]; their
// MatMul [N, G, M/G, P] reshaped to [N, M, spatial...], plus the bias. The last node writes the
// Conv's output name. False with `why` when it cannot (weight shape unknown; auto_pad SAME with an
// input of unknown spatial size; opset below 13 where Reshape/Slice/Pad inputs differ).
bool ConvAsMatMul(const onnx::NodeProto& conv, const ShapeTable& shapes, int64_t opset,
                  std::vector<onnx::NodeProto>* out, std::string* why);

}  // namespace onnxprobe
