// Tensor element types before any run, from ONNX 1.12 shape inference (advisory: newer opsets
// and custom domains leave tensors untyped, and callers then run the model to learn them).
#include <onnx/shape_inference/implementation.h>

#include "model/model_impl.h"
#include "onnxprobe/graph/fp16_graph.h"

namespace onnxprobe {

TensorTypes InferTensorTypes(const Model& model) {
  TensorTypes out;
  onnx::ModelProto copy = model.impl().proto;
  try {
    onnx::shape_inference::InferShapes(copy);
  } catch (const std::exception&) {
    // partial results may still be present in value_info
  }
  auto record = [&](const std::string& name, int elem_type) {
    auto dt = DTypeFromOnnx(elem_type);
    if (dt.ok() && elem_type != 0) out[name] = *dt;
  };
  const auto& g = copy.graph();
  for (const auto& t : g.initializer()) record(t.name(), t.data_type());
  for (const auto& v : g.input()) record(v.name(), v.type().tensor_type().elem_type());
  for (const auto& v : g.value_info()) record(v.name(), v.type().tensor_type().elem_type());
  for (const auto& v : g.output()) record(v.name(), v.type().tensor_type().elem_type());
  return out;
}

}  // namespace onnxprobe
