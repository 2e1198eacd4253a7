// Tensor sizes from ONNX 1.12 shape inference. It is advisory: models with newer opsets may
// not infer, and then the batch planner works with what is known.
#include <onnx/shape_inference/implementation.h>

#include "model/model_impl.h"
#include "onnxprobe/capture/capture.h"

namespace onnxprobe {

std::map<std::string, uint64_t> EstimateTensorBytes(const Model& model,
                                                    const std::vector<NamedTensor>& inputs) {
  std::map<std::string, uint64_t> out;
  onnx::ModelProto copy = model.impl().proto;
  auto* g = copy.mutable_graph();
  for (auto& in : *g->mutable_input()) {
    for (const auto& nt : inputs) {
      if (nt.name != in.name()) continue;
      auto* shape = in.mutable_type()->mutable_tensor_type()->mutable_shape();
      shape->clear_dim();
      for (int64_t d : nt.tensor.shape()) shape->add_dim()->set_dim_value(d);
    }
  }
  try {
    onnx::shape_inference::InferShapes(copy);
  } catch (const std::exception&) {
    // partial results may still be present in value_info
  }
  auto record = [&](const onnx::ValueInfoProto& v) {
    ValueInfo vi = ValueInfoFromProto(v);
    auto dt = DTypeFromOnnx(vi.elem_type);
    if (!dt.ok() || !vi.has_shape) return;
    Shape s;
    for (const Dim& d : vi.dims) {
      if (d.value < 0) return;
      s.push_back(d.value);
    }
    auto b = NumBytes(*dt, s);
    if (b.ok()) out[vi.name] = *b;
  };
  for (const auto& v : copy.graph().value_info()) record(v);
  for (const auto& v : copy.graph().output()) record(v);
  return out;
}

}  // namespace onnxprobe
