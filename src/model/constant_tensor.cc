#include <onnx/onnx_pb.h>

#include "model/model_impl.h"
#include "onnxprobe/model/model.h"
#include "tensor/tensor_proto_convert.h"

namespace onnxprobe {
namespace {

const onnx::NodeProto* ConstantNode(const onnx::GraphProto& g, const std::string& name) {
  for (const auto& n : g.node()) {
    if (n.op_type() == "Constant" && n.output_size() == 1 && n.output(0) == name) return &n;
  }
  return nullptr;
}

}  // namespace

Expected<Tensor> ConstantTensor(const Model& m, const std::string& name_in) {
  std::string name = name_in;
  for (int guard = 0; guard < 16; ++guard) {  // through Identity (exporters share weights so)
    const TensorEntry* e = m.index().Find(name);
    if (e == nullptr || e->producer < 0) break;
    const NodeInfo& n = m.index().nodes()[e->producer];
    if (n.op_type != "Identity" || n.inputs.empty()) break;
    name = n.inputs[0];
  }
  const onnx::ModelProto* full = m.impl().FullProto();
  if (full == nullptr) return Corrupt(m.path() + ": cannot re-read the model");
  for (const auto& t : full->graph().initializer()) {
    if (t.name() != name) continue;
    std::string what = "initializer '" + name + "'";
    if (t.data_location() == onnx::TensorProto::EXTERNAL) {
      OP_ASSIGN_OR_RETURN(std::string bytes, ReadExternalData(t, m.dir()));
      return TensorFromProto(t, what, &bytes);
    }
    return TensorFromProto(t, what);
  }
  if (const onnx::NodeProto* n = ConstantNode(full->graph(), name)) {
    for (const auto& a : n->attribute()) {
      if (a.name() == "value") return TensorFromProto(a.t(), "Constant '" + name + "'");
    }
  }
  return NotFound("tensor '" + name + "' is not a constant");
}

}  // namespace onnxprobe
