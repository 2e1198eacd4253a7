// The float64 copy of a model (BuildExactModel, graph/exact.h).
#include <onnx/shape_inference/implementation.h>

#include <map>
#include <unordered_map>

#include "graph/exact_conv.h"
#include "graph/exact_qdq.h"
#include "graph/fp16_plan.h"
#include "model/model_impl.h"
#include "onnxprobe/graph/exact.h"
#include "tensor/tensor_proto_convert.h"

namespace onnxprobe {

const char* ExactMethodName(ExactMethod m) {
  switch (m) {
    case ExactMethod::kFloat64Kernel:
      return "float64 kernel";
    case ExactMethod::kConvAsMatMul:
      return "im2col + float64 MatMul";
    case ExactMethod::kOwnKernel:
      return "onnxprobe float64 kernel";
    case ExactMethod::kQdqAsFloat64:
      return "float64 ops";
    case ExactMethod::kFloat32:
      return "float32 (no float64 kernel)";
  }
  return "?";
}

size_t ExactModel::Count(ExactMethod m) const {
  size_t n = 0;
  for (const auto& x : nodes) n += x.method == m;
  return n;
}

std::string ExactModel::Summary() const {
  std::string s = "exact reference: " + std::to_string(Count(ExactMethod::kFloat64Kernel)) +
                  " nodes in float64 kernels";
  if (size_t c = Count(ExactMethod::kConvAsMatMul))
    s += ", " + std::to_string(c) + " Conv as im2col + float64 MatMul";
  if (size_t c = Count(ExactMethod::kOwnKernel))
    s += ", " + std::to_string(c) + " on onnxprobe float64 kernels";
  if (size_t c = Count(ExactMethod::kQdqAsFloat64))
    s += ", " + std::to_string(c) + " Quantize/DequantizeLinear as float64 ops";
  s += ", " + std::to_string(Count(ExactMethod::kFloat32)) + " in float32 (not exact)";
  return s;
}

namespace {

constexpr int kF32 = onnx::TensorProto::FLOAT;
constexpr int kF64 = onnx::TensorProto::DOUBLE;
bool IsFloatType(int t) {
  return t == kF32 || t == kF64 || t == onnx::TensorProto::FLOAT16 ||
         t == onnx::TensorProto::BFLOAT16;
}

// A Cast node `name` making `out` of type `to` from `in`.
onnx::NodeProto CastNode(const std::string& name, const std::string& in, const std::string& out,
                         int to) {
  onnx::NodeProto c;
  c.set_op_type("Cast");
  c.set_name(name);
  c.add_input(in);
  c.add_output(out);
  auto* a = c.add_attribute();
  a->set_name("to");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(to);
  return c;
}

// Ops whose ONNX Runtime CPU kernels include float64 (measured on 1.20.1 and 1.32.0, one node
// of each in float64; tests/python/test_exact.py checks the list against the installed runtime).
const std::set<std::string>& Float64Ops() {
  static const std::set<std::string> kOps = {"Abs",
                                             "Add",
                                             "And",
                                             "ArgMax",
                                             "ArgMin",
                                             "BatchNormalization",
                                             "Cast",
                                             "CastLike",
                                             "Ceil",
                                             "Clip",
                                             "Compress",
                                             "Concat",
                                             "Constant",
                                             "ConstantOfShape",
                                             "Cos",
                                             "CumSum",
                                             "DepthToSpace",
                                             "Div",
                                             "Dropout",
                                             "Einsum",
                                             "Equal",
                                             "Exp",
                                             "Expand",
                                             "Flatten",
                                             "Floor",
                                             "Gather",
                                             "GatherElements",
                                             "GatherND",
                                             "Gemm",
                                             "Greater",
                                             "GreaterOrEqual",
                                             "GroupNormalization",
                                             "Identity",
                                             "If",
                                             "IsInf",
                                             "IsNaN",
                                             "LayerNormalization",
                                             "LeakyRelu",
                                             "Less",
                                             "LessOrEqual",
                                             "Log",
                                             "LogSoftmax",
                                             "Loop",
                                             "LpNormalization",
                                             "MatMul",
                                             "Max",
                                             "MaxPool",
                                             "Min",
                                             "Mod",
                                             "Mul",
                                             "Neg",
                                             "Not",
                                             "Or",
                                             "Pad",
                                             "Pow",
                                             "PRelu",
                                             "Range",
                                             "Reciprocal",
                                             "ReduceL1",
                                             "ReduceL2",
                                             "ReduceLogSum",
                                             "ReduceLogSumExp",
                                             "ReduceMax",
                                             "ReduceMean",
                                             "ReduceMin",
                                             "ReduceProd",
                                             "ReduceSum",
                                             "ReduceSumSquare",
                                             "Relu",
                                             "Reshape",
                                             "Round",
                                             "Scan",
                                             "ScatterElements",
                                             "ScatterND",
                                             "Shape",
                                             "Shrink",
                                             "Sigmoid",
                                             "Sign",
                                             "Sin",
                                             "Size",
                                             "Slice",
                                             "Softmax",
                                             "SpaceToDepth",
                                             "Split",
                                             "Sqrt",
                                             "Squeeze",
                                             "Sub",
                                             "Sum",
                                             "Tanh",
                                             "Tile",
                                             "TopK",
                                             "Transpose",
                                             "Trilu",
                                             "Unsqueeze",
                                             "Where",
                                             "Xor"};
  return kOps;
}

}  // namespace

namespace {

// Types and static shapes of every tensor of every graph, from ONNX shape inference.
void CollectShapes(const onnx::GraphProto& g, ShapeTable* out) {
  auto record = [&](const onnx::ValueInfoProto& v) {
    if (!v.type().has_tensor_type()) return;
    const auto& tt = v.type().tensor_type();
    TypedShape& ts = (*out)[v.name()];
    ts.elem_type = tt.elem_type();
    ts.dims.clear();
    ts.rank_known = tt.has_shape();
    for (const auto& d : tt.shape().dim())
      ts.dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
  };
  for (const auto& t : g.initializer()) {
    TypedShape& ts = (*out)[t.name()];
    ts.elem_type = t.data_type();
    ts.rank_known = true;
    ts.dims.assign(t.dims().begin(), t.dims().end());
  }
  for (const auto& v : g.input()) record(v);
  for (const auto& v : g.value_info()) record(v);
  for (const auto& v : g.output()) record(v);
  for (const auto& n : g.node()) {
    for (const auto& a : n.attribute()) {
      if (a.has_g()) CollectShapes(a.g(), out);
      for (const auto& sub : a.graphs()) CollectShapes(sub, out);
    }
  }
}

class ExactBuilder {
 public:
  ExactBuilder(const Model& model, const std::set<std::string>& float32_nodes,
               const ShapeTable& shapes, int64_t opset)
      : model_(model), float32_nodes_(float32_nodes), shapes_(shapes), opset_(opset) {}

  Status Graph(onnx::GraphProto* g, bool main);
  std::vector<ExactNode> nodes;

 private:
  bool IsFloat(const std::string& name) const {
    if (name.empty()) return false;
    auto it = shapes_.find(name);
    return it != shapes_.end() && IsFloatType(it->second.elem_type);
  }
  Status Tensor64(onnx::TensorProto* t) const;
  Status Attributes(onnx::NodeProto* n) const;
  void Float32(onnx::NodeProto n, const std::string& why, std::vector<onnx::NodeProto>* out);
  const Model& model_;
  const std::set<std::string>& float32_nodes_;
  ShapeTable shapes_;  // also the float64 copies of graph inputs and weights, by their new names
  int64_t opset_;
  std::map<std::string, std::string> narrowed_;  // float64 tensor -> its float32 Cast
};

Status ExactBuilder::Tensor64(onnx::TensorProto* t) const {
  if (!IsFloatType(t->data_type()) || t->data_type() == kF64) return Status::Ok();
  std::string external;
  const std::string* ext = nullptr;
  if (t->data_location() == onnx::TensorProto::EXTERNAL) {
    OP_ASSIGN_OR_RETURN(external, ReadExternalData(*t, model_.dir()));
    ext = &external;
  }
  OP_ASSIGN_OR_RETURN(Tensor v, TensorFromProto(*t, t->name(), ext));
  OP_ASSIGN_OR_RETURN(Tensor d, Tensor::Allocate(DType::kFloat64, v.shape()));
  double* out = d.data_as<double>();
  if (v.dtype() == DType::kFloat32) {
    const float* in = v.data_as<float>();
    for (uint64_t i = 0; i < v.num_elements(); ++i) out[i] = in[i];
  } else {
    for (uint64_t i = 0; i < v.num_elements(); ++i) out[i] = ElementAsDouble(v, i);
  }
  std::string name = t->name();
  t->Clear();
  TensorToProto(d, name, t);
  return Status::Ok();
}

Status ExactBuilder::Attributes(onnx::NodeProto* n) const {
  for (auto& a : *n->mutable_attribute()) {
    if (a.has_t()) OP_RETURN_IF_ERROR(Tensor64(a.mutable_t()));
    bool type_attr = (n->op_type() == "Cast" && a.name() == "to") ||
                     (a.name() == "dtype" && n->op_type() != "Cast");
    if (type_attr && a.type() == onnx::AttributeProto::INT && IsFloatType(static_cast<int>(a.i())))
      a.set_i(kF64);
  }
  if (n->op_type() != "Constant") return Status::Ok();
  // value_float(s) become a float64 value tensor
  for (int k = 0; k < n->attribute_size(); ++k) {
    const onnx::AttributeProto a = n->attribute(k);
    if (a.name() != "value_float" && a.name() != "value_floats") continue;
    onnx::AttributeProto v;
    v.set_name("value");
    v.set_type(onnx::AttributeProto::TENSOR);
    onnx::TensorProto* t = v.mutable_t();
    t->set_data_type(kF64);
    if (a.name() == "value_float") {
      t->add_double_data(a.f());
    } else {
      t->add_dims(a.floats_size());
      for (float f : a.floats()) t->add_double_data(f);
    }
    *n->mutable_attribute(k) = v;
  }
  return Status::Ok();
}

void ExactBuilder::Float32(onnx::NodeProto n, const std::string& why,
                           std::vector<onnx::NodeProto>* out) {
  const std::string name = n.name().empty() ? n.output(0) : n.name();
  nodes.push_back({name, n.op_type(), ExactMethod::kFloat32, why});
  for (auto& in : *n.mutable_input()) {
    if (!IsFloat(in)) continue;
    auto it = narrowed_.find(in);
    if (it == narrowed_.end()) {
      std::string f = in + "@exact_f32";
      onnx::NodeProto c = CastNode(f + "/cast", in, f, kF32);
      out->push_back(c);
      it = narrowed_.emplace(in, f).first;
    }
    in = it->second;
  }
  std::vector<onnx::NodeProto> widen;
  for (auto& o : *n.mutable_output()) {
    if (!IsFloat(o)) continue;
    onnx::NodeProto c = CastNode(o + "@exact_f64/cast", o + "@exact_f32out", o, kF64);
    o = o + "@exact_f32out";
    widen.push_back(c);
  }
  out->push_back(n);
  out->insert(out->end(), widen.begin(), widen.end());
}

// Renames the tensors `rename` names wherever `g`'s nodes (and their bodies) read them.
void RenameReads(onnx::GraphProto* g, const std::map<std::string, std::string>& rename) {
  for (auto& n : *g->mutable_node()) {
    for (auto& in : *n.mutable_input()) {
      auto it = rename.find(in);
      if (it != rename.end()) in = it->second;
    }
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) RenameReads(a.mutable_g(), rename);
      for (auto& sub : *a.mutable_graphs()) RenameReads(&sub, rename);
    }
  }
}

Status ExactBuilder::Graph(onnx::GraphProto* g, bool main) {
  // a body reads the float32 copies its own nodes make (an outer one may come after its node)
  std::map<std::string, std::string> outer = std::move(narrowed_);
  narrowed_.clear();
  // a body's weights become float64 in place; the main graph's stay as the file holds them (the
  // runtime maps large ones from it) and are cast to float64 where read, like its inputs
  if (!main) {
    for (auto& t : *g->mutable_initializer()) OP_RETURN_IF_ERROR(Tensor64(&t));
  }
  auto widen_type = [](onnx::ValueInfoProto* v) {
    // a sequence or map (a ZipMap's output) stays as it is: asking for its tensor type would
    // turn it into an untyped tensor
    if (!v->type().has_tensor_type()) return;
    auto* tt = v->mutable_type()->mutable_tensor_type();
    if (IsFloatType(tt->elem_type())) tt->set_elem_type(kF64);
  };
  if (!main) {
    for (auto& v : *g->mutable_input()) widen_type(&v);
  }
  for (auto& v : *g->mutable_output()) widen_type(&v);
  g->clear_value_info();  // the runtime infers the float64 types

  std::vector<onnx::NodeProto> out;
  std::map<std::string, std::string> input_cast;  // main graph: float input -> its float64 copy
  if (main) {
    for (const auto& v : g->input()) {
      if (!v.type().has_tensor_type() || !IsFloatType(v.type().tensor_type().elem_type()) ||
          v.type().tensor_type().elem_type() == kF64)
        continue;
      onnx::NodeProto c = CastNode(v.name() + "@exact/cast", v.name(), v.name() + "@exact", kF64);
      out.push_back(c);
      input_cast[v.name()] = v.name() + "@exact";
    }
    for (const auto& t : g->initializer()) {
      if (!IsFloatType(t.data_type()) || t.data_type() == kF64 || input_cast.count(t.name()))
        continue;
      onnx::NodeProto c = CastNode(t.name() + "@exact/cast", t.name(), t.name() + "@exact", kF64);
      out.push_back(c);
      input_cast[t.name()] = t.name() + "@exact";
    }
  }
  for (const auto& [from, to] : input_cast) {
    auto it = shapes_.find(from);
    if (it == shapes_.end()) continue;
    TypedShape copy = it->second;
    copy.elem_type = kF64;
    shapes_[to] = copy;
  }
  if (!input_cast.empty()) RenameReads(g, input_cast);
  for (onnx::NodeProto n : g->node()) {
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) OP_RETURN_IF_ERROR(Graph(a.mutable_g(), false));
      for (auto& sub : *a.mutable_graphs()) OP_RETURN_IF_ERROR(Graph(&sub, false));
    }
    OP_RETURN_IF_ERROR(Attributes(&n));
    bool floats = false;
    for (const auto& x : n.input()) floats = floats || IsFloat(x);
    for (const auto& x : n.output()) floats = floats || IsFloat(x);
    const std::string name = n.name().empty() ? (n.output_size() ? n.output(0) : "") : n.name();
    bool onnx_domain = n.domain().empty() || n.domain() == "ai.onnx";
    if (!floats || n.op_type() == "Constant") {
      out.push_back(n);
      continue;
    }
    if (float32_nodes_.count(name)) {
      Float32(n, "the runtime has no float64 kernel for it", &out);
      continue;
    }
    if (!onnx_domain) {
      Float32(n, "an op of domain " + n.domain(), &out);
      continue;
    }
    if (n.op_type() == "Conv") {
      std::string why;
      if (ConvAsMatMul(n, shapes_, opset_, &out, &why)) {
        nodes.push_back({name, "Conv", ExactMethod::kConvAsMatMul, ""});
      } else {
        Float32(n, why, &out);
      }
      continue;
    }
    if (n.op_type() == "ConvTranspose") {  // its own kernel takes explicit pads only
      std::string why;
      for (const auto& a : n.attribute()) {
        if (a.name() == "output_shape") why = "ConvTranspose with output_shape";
        if (a.name() == "auto_pad" && a.s() != "NOTSET" && a.s() != "VALID")
          why = "ConvTranspose with auto_pad " + a.s();
      }
      if (!why.empty()) {
        Float32(n, why + " (onnxprobe's float64 kernel takes explicit pads)", &out);
        continue;
      }
    }
    if (n.op_type() == "DequantizeLinear" || n.op_type() == "QuantizeLinear") {
      std::string why;
      if (QdqAsFloat64(n, shapes_, &out, &why)) {
        nodes.push_back({name, n.op_type(), ExactMethod::kQdqAsFloat64, ""});
      } else {
        Float32(n, why, &out);
      }
      continue;
    }
    if (OwnExactKernelOps().count(n.op_type())) {
      n.set_domain(kExactDomain);
      nodes.push_back({name, n.op_type(), ExactMethod::kOwnKernel, ""});
      out.push_back(n);
      continue;
    }
    if (Float64Ops().count(n.op_type())) {
      nodes.push_back({name, n.op_type(), ExactMethod::kFloat64Kernel, ""});
      out.push_back(n);
      continue;
    }
    Float32(n, "ONNX Runtime has no float64 kernel for " + n.op_type(), &out);
  }
  g->clear_node();
  for (auto& n : out) *g->add_node() = std::move(n);
  narrowed_ = std::move(outer);
  return Status::Ok();
}

}  // namespace

bool IsExactHelperTensor(const std::string& name) {
  auto ends = [&](const std::string& tail) {
    return name.size() >= tail.size() &&
           name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
  };
  return ends("@exact") || ends("@exact_f32") || ends("@exact_f32out") ||
         name.find("/exact/") != std::string::npos;
}

Expected<ExactModel> BuildExactModel(const Model& model,
                                     const std::set<std::string>& float32_nodes) {
  OP_RETURN_IF_ERROR(model.impl().RequireBytes());
  // large weights stay references into the model's file: the copy adds only its graph
  OP_ASSIGN_OR_RETURN(onnx::ModelProto p, model.impl().EditableProto(model.path()));
  int64_t opset = DefaultOpset(p);
  if (opset < 11)
    return Unsupported(model.path() +
                       ": the exact reference needs opset 11 or newer, the model has " +
                       std::to_string(opset));
  ShapeTable shapes;
  {
    onnx::ModelProto typed = model.impl().proto;  // weights left out: shapes only
    try {
      onnx::shape_inference::InferShapes(typed);
    } catch (const std::exception&) {
      // partial results stay in value_info
    }
    CollectShapes(typed.graph(), &shapes);
  }
  ExactBuilder b(model, float32_nodes, shapes, opset);
  OP_RETURN_IF_ERROR(b.Graph(p.mutable_graph(), true));
  bool own = false;
  for (const auto& n : b.nodes) own = own || n.method == ExactMethod::kOwnKernel;
  if (own) {
    auto* imp = p.add_opset_import();
    imp->set_domain(kExactDomain);
    imp->set_version(1);
  }
  ExactModel m;
  m.nodes = std::move(b.nodes);
  if (!p.SerializeToString(&m.bytes))
    return ResourceExhausted(model.path() + ": the float64 model does not serialize (over 2 GB?)");
  return m;
}

}  // namespace onnxprobe
