// Which inputs and outputs of a node can be float16, read from the operator's type constraints,
// so no operator list is needed.
#include "graph/fp16_plan.h"

#include <onnx/defs/schema.h>

#include <cmath>
#include <cstring>
#include <set>

#include "model/model_impl.h"

namespace onnxprobe {
namespace {

bool AllowsFp16(const onnx::OpSchema::FormalParameter& p) {
  for (const auto* t : p.GetTypes()) {
    if (t != nullptr && *t == "tensor(float16)") return true;
  }
  return false;
}

// The formal parameter of actual position `i` (the last one repeats when variadic).
const onnx::OpSchema::FormalParameter* Formal(
    const std::vector<onnx::OpSchema::FormalParameter>& formals, int i) {
  if (i < static_cast<int>(formals.size())) return &formals[i];
  if (!formals.empty() &&
      formals.back().GetOption() == onnx::OpSchema::FormalParameterOption::Variadic) {
    return &formals.back();
  }
  return nullptr;
}

bool IsFloat32(const TensorTypes& types, const std::string& name) {
  auto it = types.find(name);
  return !name.empty() && it != types.end() && it->second == DType::kFloat32;
}

}  // namespace

const char* Fp16EligibilityName(Fp16Eligibility e) {
  switch (e) {
    case Fp16Eligibility::kConvertible:
      return "convertible";
    case Fp16Eligibility::kNoFloat:
      return "no float tensor";
    case Fp16Eligibility::kCustomDomain:
      return "custom domain";
    case Fp16Eligibility::kUnknownSchema:
      return "unknown schema";
    case Fp16Eligibility::kSubgraph:
      return "has subgraphs";
  }
  return "?";
}

int64_t DefaultOpset(const onnx::ModelProto& model) {
  for (const auto& o : model.opset_import()) {
    if (o.domain().empty() || o.domain() == "ai.onnx") return o.version();
  }
  return 0;
}

Fp16NodePlan PlanFp16Node(const onnx::NodeProto& node, int64_t default_opset,
                          const TensorTypes& types) {
  Fp16NodePlan plan;
  plan.input_fp16.assign(node.input_size(), false);
  plan.output_fp16.assign(node.output_size(), false);
  if (!node.domain().empty() && node.domain() != "ai.onnx") {
    plan.eligibility = Fp16Eligibility::kCustomDomain;
    return plan;
  }
  for (const auto& a : node.attribute()) {
    if (a.type() == onnx::AttributeProto::GRAPH || a.type() == onnx::AttributeProto::GRAPHS ||
        a.has_g() || a.graphs_size() > 0) {
      plan.eligibility = Fp16Eligibility::kSubgraph;
      return plan;
    }
  }
  const onnx::OpSchema* schema =
      onnx::OpSchemaRegistry::Schema(node.op_type(), static_cast<int>(default_opset), "");
  if (schema == nullptr) {
    plan.eligibility = Fp16Eligibility::kUnknownSchema;
    return plan;
  }
  std::set<std::string> bound;  // type parameters an input binds
  bool any = false;
  for (int i = 0; i < node.input_size(); ++i) {
    const auto* f = Formal(schema->inputs(), i);
    if (f == nullptr) continue;
    bound.insert(f->GetTypeStr());
    if (IsFloat32(types, node.input(i)) && AllowsFp16(*f)) plan.input_fp16[i] = any = true;
  }
  for (int i = 0; i < node.output_size(); ++i) {
    const auto* f = Formal(schema->outputs(), i);
    if (f == nullptr || !bound.count(f->GetTypeStr())) continue;
    if (IsFloat32(types, node.output(i)) && AllowsFp16(*f)) plan.output_fp16[i] = any = true;
  }
  plan.eligibility = any ? Fp16Eligibility::kConvertible : Fp16Eligibility::kNoFloat;
  return plan;
}

Expected<onnx::TensorProto> ToFp16Initializer(const onnx::TensorProto& t, const std::string& name,
                                              const std::string& model_dir) {
  std::vector<float> values;
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    OP_ASSIGN_OR_RETURN(std::string bytes, ReadExternalData(t, model_dir));
    values.resize(bytes.size() / sizeof(float));
    std::memcpy(values.data(), bytes.data(), values.size() * sizeof(float));
  } else if (t.has_raw_data()) {
    values.resize(t.raw_data().size() / sizeof(float));
    std::memcpy(values.data(), t.raw_data().data(), values.size() * sizeof(float));
  } else {
    values.assign(t.float_data().begin(), t.float_data().end());
  }
  onnx::TensorProto h;
  h.set_name(name);
  h.set_data_type(onnx::TensorProto::FLOAT16);
  *h.mutable_dims() = t.dims();
  std::string raw(values.size() * 2, '\0');
  for (size_t i = 0; i < values.size(); ++i) {
    float v = values[i];
    if (std::isfinite(v)) v = std::fmax(-65504.0f, std::fmin(65504.0f, v));
    uint16_t b = FloatToHalf(v);
    std::memcpy(&raw[2 * i], &b, 2);
  }
  h.set_raw_data(std::move(raw));
  return h;
}

}  // namespace onnxprobe
