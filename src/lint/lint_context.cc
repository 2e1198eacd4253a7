#include "lint/lint_context.h"

#include <onnx/shape_inference/implementation.h>

#include <cstdio>

#include "model/model_impl.h"
#include "tensor/tensor_proto_convert.h"

namespace onnxprobe::lint {
namespace {

void CollectReads(const onnx::GraphProto& g, std::unordered_set<std::string>* read) {
  for (const auto& n : g.node()) {
    for (const auto& i : n.input()) {
      if (!i.empty()) read->insert(i);
    }
    for (const auto& a : n.attribute()) {
      if (a.has_g()) CollectReads(a.g(), read);
      for (const auto& sg : a.graphs()) CollectReads(sg, read);
    }
  }
}

Expected<Tensor> ScalarOrList(DType dt, const std::vector<double>& v, bool scalar) {
  Shape shape = scalar ? Shape{} : Shape{int64_t(v.size())};
  OP_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(dt, shape));
  for (size_t i = 0; i < v.size(); ++i) {
    if (dt == DType::kFloat32)
      t.data_as<float>()[i] = float(v[i]);
    else
      t.data_as<int64_t>()[i] = int64_t(v[i]);
  }
  return t;
}

}  // namespace

LintContext::LintContext(const Model& model, const onnx::ModelProto& full,
                         const LintOptions& options)
    : model_(model), proto_(full), options_(options) {
  const auto& g = proto_.graph();
  for (const auto& t : g.initializer()) initializers_[t.name()] = &t;
  for (const auto& n : g.node()) {
    if (n.op_type() == "Constant" && (n.domain().empty() || n.domain() == "ai.onnx") &&
        n.output_size() == 1) {
      constant_nodes_[n.output(0)] = &n;
    }
  }
  CollectReads(g, &read_);
  for (const auto& o : g.output()) graph_outputs_.insert(o.name());
  for (const ValueInfo& v : model_.summary().inputs) {
    for (const Dim& d : v.dims) dynamic_input_ |= d.value < 0;
  }

  // Shape inference runs on the indexed graph (large weights dropped, small constants kept).
  onnx::ModelProto copy = model_.impl().proto;
  try {
    onnx::shape_inference::InferShapes(copy);
  } catch (const std::exception& e) {
    Note(std::string("ONNX 1.12 shape inference stopped early (rules that need shapes saw only "
                     "part of the graph): ") +
         e.what());
  }
  for (const auto& v : copy.graph().value_info()) types_[v.name()] = ValueInfoFromProto(v);
  for (const auto& v : copy.graph().output()) types_[v.name()] = ValueInfoFromProto(v);
  for (const auto& v : g.input()) types_[v.name()] = ValueInfoFromProto(v);
  for (const auto& t : g.initializer()) {
    ValueInfo v;
    v.name = t.name();
    v.elem_type = t.data_type();
    v.has_shape = true;
    for (int64_t d : t.dims()) v.dims.push_back(Dim{d, ""});
    types_[t.name()] = v;
  }
}

int64_t LintContext::Opset(const std::string& domain) const {
  for (const auto& o : proto_.opset_import()) {
    bool match = o.domain() == domain || (domain.empty() && o.domain() == "ai.onnx") ||
                 (domain == "ai.onnx" && o.domain().empty());
    if (match) return o.version();
  }
  return 0;
}

const onnx::TensorProto* LintContext::Initializer(const std::string& name) const {
  auto it = initializers_.find(name);
  return it == initializers_.end() ? nullptr : it->second;
}

bool LintContext::IsConstant(const std::string& name) const {
  return initializers_.count(name) > 0 || constant_nodes_.count(name) > 0;
}

Expected<Tensor> LintContext::ConstantValue(const std::string& name) const {
  if (const onnx::TensorProto* t = Initializer(name)) {
    std::string what = "initializer '" + name + "'";
    if (t->data_location() == onnx::TensorProto::EXTERNAL) {
      OP_ASSIGN_OR_RETURN(std::string bytes, ReadExternalData(*t, model_.dir()));
      return TensorFromProto(*t, what, &bytes);
    }
    return TensorFromProto(*t, what);
  }
  auto it = constant_nodes_.find(name);
  if (it == constant_nodes_.end()) return NotFound("tensor '" + name + "' is not a constant");
  const onnx::NodeProto& n = *it->second;
  std::string what = "Constant node '" + n.name() + "'";
  for (const auto& a : n.attribute()) {
    if (a.name() == "value") return TensorFromProto(a.t(), what);
    if (a.name() == "value_float") return ScalarOrList(DType::kFloat32, {a.f()}, true);
    if (a.name() == "value_int") return ScalarOrList(DType::kInt64, {double(a.i())}, true);
    if (a.name() == "value_floats")
      return ScalarOrList(DType::kFloat32, {a.floats().begin(), a.floats().end()}, false);
    if (a.name() == "value_ints") {
      std::vector<double> v(a.ints().begin(), a.ints().end());
      return ScalarOrList(DType::kInt64, v, false);
    }
  }
  return Unsupported(what + ": no dense tensor value (sparse or string constants are not read)");
}

int LintContext::Producer(const std::string& name) const {
  const TensorEntry* e = model_.index().Find(name);
  return e == nullptr ? -1 : e->producer;
}

std::vector<int> LintContext::Consumers(const std::string& name) const {
  const TensorEntry* e = model_.index().Find(name);
  return e == nullptr ? std::vector<int>{} : e->consumers;
}

const ValueInfo* LintContext::Type(const std::string& name) const {
  auto it = types_.find(name);
  return it == types_.end() ? nullptr : &it->second;
}

const onnx::AttributeProto* FindAttr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

int64_t AttrInt(const onnx::NodeProto& n, const std::string& name, int64_t def) {
  const auto* a = FindAttr(n, name);
  return a ? a->i() : def;
}

float AttrFloat(const onnx::NodeProto& n, const std::string& name, float def) {
  const auto* a = FindAttr(n, name);
  return a ? a->f() : def;
}

std::string AttrString(const onnx::NodeProto& n, const std::string& name, const std::string& def) {
  const auto* a = FindAttr(n, name);
  return a ? a->s() : def;
}

std::string Num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

LintFinding MakeFinding(LintSeverity s, const NodeInfo* n) {
  LintFinding f;
  f.severity = s;
  if (n != nullptr) {
    f.node = n->name;
    f.node_index = n->topo_index;
    f.op_type = n->op_type;
  }
  return f;
}

std::string NodeLabel(const NodeInfo& n) {
  if (n.name.empty()) return "unnamed " + n.op_type + " #" + std::to_string(n.topo_index);
  return "'" + n.name + "' (" + n.op_type + ")";
}

}  // namespace onnxprobe::lint
