#include "quant/quant_model.h"

#include <limits>

#include "model/model_impl.h"
#include "tensor/tensor_proto_convert.h"

namespace onnxprobe::quant {
namespace {

const onnx::ModelProto* Full(const Model& m) { return m.impl().FullProto(); }

}  // namespace

bool IsConstant(const Model& m, const std::string& name) {
  const TensorEntry* e = m.index().Find(name);
  for (int guard = 0; guard < 16 && e != nullptr; ++guard) {
    if (e->kind == TensorKind::kInitializer) return true;
    if (e->producer < 0) return false;
    const NodeInfo& n = m.index().nodes()[e->producer];
    if (n.op_type == "Constant") return true;
    if (n.op_type != "Identity" || n.inputs.empty()) return false;
    e = m.index().Find(n.inputs[0]);  // an Identity of a constant is one
  }
  return false;
}

int64_t IntAttr(const Model& m, int n, const std::string& attr, int64_t def) {
  const onnx::ModelProto* full = Full(m);
  if (full == nullptr || n < 0) return def;
  const NodeInfo& info = m.index().nodes()[n];
  const onnx::NodeProto& p = full->graph().node(info.file_index);
  for (const auto& a : p.attribute()) {
    if (a.name() == attr && a.type() == onnx::AttributeProto::INT) return a.i();
  }
  return def;
}

Expected<QuantParams> ReadParams(const Model& m, const std::string& scale, const std::string& zp,
                                 int axis, DType def_type) {
  QuantParams p;
  OP_ASSIGN_OR_RETURN(Tensor s, ConstantTensor(m, scale));
  for (uint64_t i = 0; i < s.num_elements(); ++i) p.scale.push_back(ElementAsDouble(s, i));
  p.qtype = def_type;
  if (!zp.empty()) {
    OP_ASSIGN_OR_RETURN(Tensor z, ConstantTensor(m, zp));
    if (z.num_elements() != s.num_elements()) {
      return Corrupt("zero point '" + zp + "' has " + std::to_string(z.num_elements()) +
                     " values, scale '" + scale + "' " + std::to_string(s.num_elements()));
    }
    p.qtype = z.dtype();
    for (uint64_t i = 0; i < z.num_elements(); ++i)
      p.zero_point.push_back(static_cast<int64_t>(ElementAsDouble(z, i)));
  } else {
    p.zero_point.assign(p.scale.size(), 0);
  }
  switch (p.qtype) {
    case DType::kInt8:
      p.qmin = -128, p.qmax = 127;
      break;
    case DType::kUInt8:
      p.qmin = 0, p.qmax = 255;
      break;
    case DType::kInt16:
      p.qmin = -32768, p.qmax = 32767;
      break;
    case DType::kUInt16:
      p.qmin = 0, p.qmax = 65535;
      break;
    case DType::kInt32:
      p.qmin = std::numeric_limits<int32_t>::min(), p.qmax = std::numeric_limits<int32_t>::max();
      break;
    default:
      return Unsupported("zero point '" + zp + "' has type " + DTypeName(p.qtype) +
                         ": not an integer quantization type");
  }
  p.axis = p.scale.size() > 1 ? axis : -1;
  return p;
}

}  // namespace onnxprobe::quant
