// DiffModels: model fields, nodes (matched by name, then structure: node_match.h) and
// initializers (SHA-256 of the data bytes, largest difference of changed values).
#include "onnxprobe/model/model_diff.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <unordered_map>

#include "model/model_impl.h"
#include "model/node_match.h"
#include "tensor/tensor_proto_convert.h"

namespace onnxprobe {
namespace {

constexpr size_t kInlineValues = 8;  // tensor attributes up to this many values show them

std::string Float(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::string DTypeText(int onnx_type) {
  auto dt = DTypeFromOnnx(onnx_type);
  return dt.ok() ? DTypeName(*dt) : OnnxTypeName(onnx_type);
}

std::string TensorText(const onnx::TensorProto& t) {
  std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
  std::string head = DTypeText(t.data_type()) + ShapeToString(dims);
  auto v = TensorFromProto(t, "attribute tensor");
  if (v.ok() && v->num_elements() <= kInlineValues) {
    std::string s = head + " {";
    for (uint64_t i = 0; i < v->num_elements(); ++i)
      s += (i ? ", " : "") + Float(ElementAsDouble(*v, i));
    return s + "}";
  }
  std::string bytes;
  t.SerializeToString(&bytes);
  return head + " sha256 " + Sha256Hex(bytes.data(), bytes.size()).substr(0, 16);
}

std::string GraphText(const onnx::GraphProto& g) {
  std::string bytes;
  g.SerializeToString(&bytes);
  return "graph '" + g.name() + "' (" + std::to_string(g.node_size()) + " nodes) sha256 " +
         Sha256Hex(bytes.data(), bytes.size()).substr(0, 16);
}

std::string AttrText(const onnx::AttributeProto& a) {
  auto list = [](const auto& field, auto render) {
    std::string s = "[";
    for (int i = 0; i < field.size(); ++i) s += (i ? ", " : "") + render(field.Get(i));
    return s + "]";
  };
  switch (a.type()) {
    case onnx::AttributeProto::FLOAT:
      return Float(a.f());
    case onnx::AttributeProto::INT:
      return std::to_string(a.i());
    case onnx::AttributeProto::STRING:
      return "\"" + a.s() + "\"";
    case onnx::AttributeProto::TENSOR:
      return TensorText(a.t());
    case onnx::AttributeProto::GRAPH:
      return GraphText(a.g());
    case onnx::AttributeProto::FLOATS:
      return list(a.floats(), [](float v) { return Float(v); });
    case onnx::AttributeProto::INTS:
      return list(a.ints(), [](int64_t v) { return std::to_string(v); });
    case onnx::AttributeProto::STRINGS:
      return list(a.strings(), [](const std::string& v) { return "\"" + v + "\""; });
    case onnx::AttributeProto::TENSORS:
      return list(a.tensors(), [](const onnx::TensorProto& t) { return TensorText(t); });
    case onnx::AttributeProto::GRAPHS:
      return list(a.graphs(), [](const onnx::GraphProto& g) { return GraphText(g); });
    default: {
      std::string bytes;
      a.SerializeToString(&bytes);
      return "(type " + std::to_string(int(a.type())) + ") sha256 " +
             Sha256Hex(bytes.data(), bytes.size()).substr(0, 16);
    }
  }
}

std::string OpName(const NodeInfo& n) {
  return n.domain.empty() || n.domain == "ai.onnx" ? n.op_type : n.domain + "." + n.op_type;
}

// One side: the matcher's view, plus each node's attributes by name.
struct Side {
  const Model* model = nullptr;
  const onnx::ModelProto* full = nullptr;
  MatchGraph graph;
  std::vector<std::map<std::string, std::string>> attrs;  // per node (topological order)
  std::unordered_map<std::string, const onnx::TensorProto*> inits;
  std::unordered_map<std::string, std::string> hashes;
  // weights held by Constant nodes (paddle2onnx, tf2onnx, spox): output name -> node name. They
  // are initializers to the matching (their readers match by where they read them, not by the
  // Constant node's name) and to the initializer diff.
  std::unordered_map<std::string, std::string> constants;
  std::vector<int> topo;  // graph.nodes index -> the graph index's topological index
};

// A Constant node holding a tensor (`value`), with no inputs and one output: a weight.
const onnx::TensorProto* ConstantWeight(const NodeInfo& n, const onnx::NodeProto& p) {
  if (n.op_type != "Constant" || !(n.domain.empty() || n.domain == "ai.onnx") ||
      n.outputs.size() != 1 || n.outputs[0].empty())
    return nullptr;
  for (const auto& a : p.attribute())
    if (a.name() == "value" && a.type() == onnx::AttributeProto::TENSOR) return &a.t();
  return nullptr;
}

Status Build(const Model& m, Side* s) {
  s->model = &m;
  OP_RETURN_IF_ERROR(m.impl().RequireBytes());
  s->full = m.impl().FullProto();
  if (s->full == nullptr) return Corrupt(m.path() + ": cannot re-read the model's weights");
  OP_ASSIGN_OR_RETURN(auto hashes, m.InitializerHashes());
  for (const auto& [name, hash] : hashes) {
    s->graph.initializers.emplace_back(name, hash);
    s->hashes[name] = hash;
  }
  for (const auto& t : s->full->graph().initializer()) s->inits[t.name()] = &t;
  for (const ValueInfo& v : m.summary().inputs) s->graph.graph_inputs.push_back(v.name);
  for (const NodeInfo& n : m.index().nodes()) {
    const onnx::NodeProto& p = s->full->graph().node(n.file_index);
    if (const onnx::TensorProto* w = ConstantWeight(n, p)) {
      auto v = TensorFromProto(*w, m.path() + ": Constant node '" + n.name + "'");
      if (v.ok()) {
        const std::string& out = n.outputs[0];
        std::string hash = Sha256Hex(v->data(), v->byte_size());
        s->graph.initializers.emplace_back(out, hash);
        s->hashes[out] = hash;
        s->inits[out] = w;
        s->constants[out] = n.name;
        continue;
      }
    }
    s->topo.push_back(n.topo_index);
    MatchGraph::Node mn;
    mn.name = n.name;
    mn.op = OpName(n);
    mn.inputs = n.inputs;
    mn.outputs = n.outputs;
    std::map<std::string, std::string> attrs;
    for (const auto& a : p.attribute()) attrs[a.name()] = AttrText(a);
    for (const auto& [k, v] : attrs) mn.attrs += k + "=" + v + "\x1e";
    s->graph.nodes.push_back(std::move(mn));
    s->attrs.push_back(std::move(attrs));
  }
  return Status::Ok();
}

void CompareFields(const Side& a, const Side& b, std::vector<FieldChange>* out) {
  const onnx::ModelProto& pa = *a.full;
  const onnx::ModelProto& pb = *b.full;
  auto field = [&](const std::string& name, const std::string& va, const std::string& vb) {
    if (va != vb) out->push_back({name, va, vb});
  };
  field("ir_version", std::to_string(pa.ir_version()), std::to_string(pb.ir_version()));
  std::map<std::string, std::pair<std::string, std::string>> opsets;
  for (const auto& o : pa.opset_import())
    opsets[o.domain().empty() ? "ai.onnx" : o.domain()].first = std::to_string(o.version());
  for (const auto& o : pb.opset_import())
    opsets[o.domain().empty() ? "ai.onnx" : o.domain()].second = std::to_string(o.version());
  for (const auto& [d, v] : opsets) field("opset " + d, v.first, v.second);
  field("producer_name", pa.producer_name(), pb.producer_name());
  field("producer_version", pa.producer_version(), pb.producer_version());
  field("domain", pa.domain(), pb.domain());
  field("model_version", std::to_string(pa.model_version()), std::to_string(pb.model_version()));
  field("graph_name", pa.graph().name(), pb.graph().name());
  std::map<std::string, std::pair<std::string, std::string>> meta;
  for (const auto& p : pa.metadata_props()) meta[p.key()].first = p.value();
  for (const auto& p : pb.metadata_props()) meta[p.key()].second = p.value();
  for (const auto& [k, v] : meta) field("metadata " + k, v.first, v.second);
  // graph inputs and outputs: by name, leftovers paired by position
  auto io = [&](const char* what, const std::vector<ValueInfo>& va,
                const std::vector<ValueInfo>& vb) {
    std::map<std::string, const ValueInfo*> by_b;
    for (const auto& v : vb) by_b[v.name] = &v;
    std::vector<const ValueInfo*> left_a, left_b;
    std::map<std::string, bool> in_a;
    for (const auto& v : va) {
      in_a[v.name] = true;
      auto it = by_b.find(v.name);
      if (it == by_b.end()) {
        left_a.push_back(&v);
        continue;
      }
      field(std::string(what) + " " + v.name, ValueInfoTypeString(v),
            ValueInfoTypeString(*it->second));
    }
    for (const auto& v : vb) {
      if (!in_a.count(v.name)) left_b.push_back(&v);
    }
    for (size_t i = 0; i < std::max(left_a.size(), left_b.size()); ++i) {
      std::string ta =
          i < left_a.size() ? left_a[i]->name + " " + ValueInfoTypeString(*left_a[i]) : "";
      std::string tb =
          i < left_b.size() ? left_b[i]->name + " " + ValueInfoTypeString(*left_b[i]) : "";
      field(std::string(what) + " #" + std::to_string(i + 1) + " (renamed, added or removed)", ta,
            tb);
    }
  };
  io("input", a.model->summary().inputs, b.model->summary().inputs);
  io("output", a.model->summary().outputs, b.model->summary().outputs);
}

NodeDiff OneSided(DiffKind kind, const MatchGraph::Node& n, int index, bool a_side) {
  NodeDiff d;
  d.kind = kind;
  (a_side ? d.name_a : d.name_b) = n.name;
  (a_side ? d.op_a : d.op_b) = n.op;
  (a_side ? d.index_a : d.index_b) = index;
  return d;
}

// B's weights that matched nodes read at the slot where A's read a weight of another name and
// other bytes (a quantizer's or editor's renamed, changed weight): B name -> A name. A weight is
// known by where it is read, not by its name. Pairs only weights neither side matched otherwise,
// and only where the slot says so unambiguously.
std::unordered_map<std::string, std::string> WeightsBySlot(const Side& a, const Side& b,
                                                           const GraphMatcher& m) {
  std::unordered_map<std::string, std::string> out;
  std::set<std::string> matched_a, ambiguous;
  for (const auto& [name_b, hash] : b.graph.initializers) {
    std::string x = m.InitializerAForB(name_b);
    if (!x.empty()) matched_a.insert(x);
  }
  std::map<std::string, std::string> claimed;  // A name -> B name
  for (size_t ib = 0; ib < b.graph.nodes.size(); ++ib) {
    int ia = m.AForB(int(ib));
    if (ia < 0) continue;
    const auto& nb = b.graph.nodes[ib];
    const auto& na = a.graph.nodes[ia];
    for (size_t s = 0; s < std::min(na.inputs.size(), nb.inputs.size()); ++s) {
      const std::string &wa = na.inputs[s], &wb = nb.inputs[s];
      if (!a.inits.count(wa) || !b.inits.count(wb) || matched_a.count(wa) ||
          !m.InitializerAForB(wb).empty())
        continue;
      auto it = out.find(wb);
      auto jt = claimed.find(wa);
      if ((it != out.end() && it->second != wa) || (jt != claimed.end() && jt->second != wb)) {
        ambiguous.insert(wb);
        continue;
      }
      out[wb] = wa;
      claimed[wa] = wb;
    }
  }
  for (const auto& x : ambiguous) out.erase(x);
  return out;
}

// The node pair's differences; false when there are none.
bool CompareNodes(const Side& a, const Side& b, const GraphMatcher& m,
                  const std::unordered_map<std::string, std::string>& by_slot, int ia, int ib,
                  NodeDiff* d) {
  const auto& na = a.graph.nodes[ia];
  const auto& nb = b.graph.nodes[ib];
  d->name_a = na.name;
  d->name_b = nb.name;
  d->op_a = na.op;
  d->op_b = nb.op;
  d->index_a = a.topo[ia];
  d->index_b = b.topo[ib];
  d->renamed = na.name != nb.name;
  d->op_changed = na.op != nb.op;
  std::map<std::string, std::pair<std::string, std::string>> attrs;
  for (const auto& [k, v] : a.attrs[ia]) attrs[k].first = v;
  for (const auto& [k, v] : b.attrs[ib]) attrs[k].second = v;
  for (const auto& [k, v] : attrs) {
    if (v.first != v.second) d->attributes.push_back({k, v.first, v.second});
  }
  for (size_t s = 0; s < std::max(na.inputs.size(), nb.inputs.size()); ++s) {
    std::string ta = s < na.inputs.size() ? na.inputs[s] : "";
    std::string tb = s < nb.inputs.size() ? nb.inputs[s] : "";
    auto w = by_slot.find(tb);  // a weight changed under another name: a weight change
    if (w != by_slot.end() && w->second == ta) continue;
    if (m.SourceA(ta) != m.SourceB(tb)) d->inputs.push_back({s, ta, tb});
  }
  const bool changed = d->op_changed || !d->attributes.empty() || !d->inputs.empty();
  d->kind = changed ? DiffKind::kChanged : DiffKind::kRenamed;
  return changed || d->renamed;
}

// Data bytes of an initializer as a Tensor (external data read in).
Expected<Tensor> Values(const Side& s, const onnx::TensorProto& t) {
  std::string what = s.model->path() + ": initializer '" + t.name() + "'";
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    OP_ASSIGN_OR_RETURN(std::string bytes, ReadExternalData(t, s.model->dir()));
    return TensorFromProto(t, what, &bytes);
  }
  return TensorFromProto(t, what);
}

// Bits of precision of a floating dtype (0 for others): a float precision change (a float16
// conversion, a double model cast down) compares values once rounded to the coarser of the two.
int FloatBits(DType t) {
  switch (t) {
    case DType::kFloat64:
      return 53;
    case DType::kFloat32:
      return 24;
    case DType::kFloat16:
      return 11;
    case DType::kBFloat16:
      return 8;
    default:
      return 0;
  }
}

double RoundTo(double x, DType t) {
  switch (t) {
    case DType::kFloat32:
      return static_cast<float>(x);
    case DType::kFloat16:
      return HalfToFloat(FloatToHalf(static_cast<float>(x)));
    case DType::kBFloat16:
      return BFloat16ToFloat(FloatToBFloat16(static_cast<float>(x)));
    default:
      return x;
  }
}

void CompareValues(const Side& a, const Side& b, const onnx::TensorProto& ta,
                   const onnx::TensorProto& tb, InitializerDiff* d) {
  if (d->shape_a != d->shape_b) return;
  auto va = Values(a, ta);
  auto vb = Values(b, tb);
  if (!va.ok() || !vb.ok() || va->num_elements() != vb->num_elements()) return;
  DType coarse = va->dtype();
  if (va->dtype() != vb->dtype()) {
    int ba = FloatBits(va->dtype()), bb = FloatBits(vb->dtype());
    if (ba == 0 || bb == 0) return;
    coarse = bb < ba ? vb->dtype() : va->dtype();
    d->rounded_to = DTypeName(coarse);
  }
  d->compared = true;
  d->num_elements = va->num_elements();
  for (uint64_t i = 0; i < va->num_elements(); ++i) {
    double x = ElementAsDouble(*va, i), y = ElementAsDouble(*vb, i);
    if (std::isnan(x) && std::isnan(y)) continue;
    // equal once rounded, unless the rounding itself overflowed: a finite weight that became
    // Inf in float16 is a change, not a conversion
    bool overflowed = std::isfinite(x) != std::isfinite(y);
    if (!overflowed && RoundTo(x, coarse) == RoundTo(y, coarse)) continue;
    ++d->num_different;
    double diff = std::fabs(x - y);
    if (std::isnan(diff)) diff = INFINITY;
    d->max_abs_diff = std::max(d->max_abs_diff, diff);
  }
}

// Nodes that only hand a static tensor on (possibly converted or reshaped): their readers are
// the ones a changed weight is about.
bool PassesOn(const std::string& op) {
  static const char* kOps[] = {"Identity", "Cast",      "Reshape",  "Transpose",
                               "Squeeze",  "Unsqueeze", "Flatten",  "DequantizeLinear",
                               "Expand",   "Tile",      "CastLike", "QuantizeLinear"};
  return std::find(std::begin(kOps), std::end(kOps), op) != std::end(kOps);
}

// Names of the nodes computing with `tensor`, following pass-on chains (through the graph
// index's consumer lists, in the order reached).
std::vector<std::string> ReadersOf(const GraphIndex& g, const std::string& tensor) {
  std::vector<std::string> out;
  std::vector<std::string> frontier{tensor};
  std::set<std::string> seen{tensor};
  while (!frontier.empty() && seen.size() < 256) {
    const TensorEntry* t = g.Find(frontier.back());
    std::string name = frontier.back();
    frontier.pop_back();
    if (t == nullptr) continue;
    for (int k : t->consumers) {
      const NodeInfo& n = g.nodes()[k];
      bool onnx_domain = n.domain.empty() || n.domain == "ai.onnx";
      if (onnx_domain && PassesOn(n.op_type) && !n.inputs.empty() && n.inputs[0] == name) {
        for (const auto& o : n.outputs) {
          if (seen.insert(o).second) frontier.push_back(o);
        }
      } else if (std::find(out.begin(), out.end(), n.name) == out.end()) {
        out.push_back(n.name);
      }
    }
  }
  return out;
}

InitializerDiff InitDiff(DiffKind kind, const Side* a, const std::string& name_a, const Side* b,
                         const std::string& name_b) {
  InitializerDiff d;
  d.kind = kind;
  d.name_a = name_a;
  d.name_b = name_b;
  if (a != nullptr) {
    const onnx::TensorProto& t = *a->inits.at(name_a);
    d.dtype_a = DTypeText(t.data_type());
    d.shape_a.assign(t.dims().begin(), t.dims().end());
    d.sha256_a = a->hashes.at(name_a);
  }
  if (b != nullptr) {
    const onnx::TensorProto& t = *b->inits.at(name_b);
    d.dtype_b = DTypeText(t.data_type());
    d.shape_b.assign(t.dims().begin(), t.dims().end());
    d.sha256_b = b->hashes.at(name_b);
  }
  d.readers =
      b != nullptr ? ReadersOf(b->model->index(), name_b) : ReadersOf(a->model->index(), name_a);
  if (a != nullptr && a->constants.count(name_a)) d.constant_a = a->constants.at(name_a);
  if (b != nullptr && b->constants.count(name_b)) d.constant_b = b->constants.at(name_b);
  return d;
}

}  // namespace

const char* DiffKindName(DiffKind k) {
  switch (k) {
    case DiffKind::kAdded:
      return "added";
    case DiffKind::kRemoved:
      return "removed";
    case DiffKind::kChanged:
      return "changed";
    case DiffKind::kRenamed:
      return "renamed";
  }
  return "?";
}

size_t ModelDiff::CountNodes(DiffKind k) const {
  return std::count_if(nodes.begin(), nodes.end(), [k](const NodeDiff& n) { return n.kind == k; });
}

size_t ModelDiff::CountInitializers(DiffKind k) const {
  return std::count_if(initializers.begin(), initializers.end(),
                       [k](const InitializerDiff& n) { return n.kind == k; });
}

Expected<ModelDiff> DiffModels(const Model& a, const Model& b) {
  Side sa, sb;
  OP_RETURN_IF_ERROR(Build(a, &sa));
  OP_RETURN_IF_ERROR(Build(b, &sb));
  ModelDiff d;
  d.path_a = a.path();
  d.path_b = b.path();
  d.nodes_a = sa.graph.nodes.size();
  d.nodes_b = sb.graph.nodes.size();
  try {
    CompareFields(sa, sb, &d.fields);
    GraphMatcher m(sa.graph, sb.graph);
    const std::unordered_map<std::string, std::string> by_slot = WeightsBySlot(sa, sb, m);
    d.a_for_b.assign(b.index().nodes().size(), -1);
    for (size_t ib = 0; ib < sb.graph.nodes.size(); ++ib) {
      int ia = m.AForB(int(ib));
      if (ia >= 0) d.a_for_b[sb.topo[ib]] = sa.topo[ia];
    }
    for (size_t ib = 0; ib < sb.graph.nodes.size(); ++ib) {
      int ia = m.AForB(int(ib));
      if (ia < 0) {
        d.nodes.push_back(OneSided(DiffKind::kAdded, sb.graph.nodes[ib], sb.topo[ib], false));
        continue;
      }
      (m.HowB(int(ib)) == MatchHow::kName ? d.nodes_matched_by_name
                                          : d.nodes_matched_by_structure)++;
      NodeDiff nd;
      if (CompareNodes(sa, sb, m, by_slot, ia, int(ib), &nd))
        d.nodes.push_back(std::move(nd));
      else
        ++d.nodes_unchanged;
    }
    for (size_t ia = 0; ia < sa.graph.nodes.size(); ++ia) {
      if (m.BForA(int(ia)) < 0)
        d.nodes.push_back(OneSided(DiffKind::kRemoved, sa.graph.nodes[ia], sa.topo[ia], true));
    }
    std::unordered_map<std::string, bool> used_a;
    for (const auto& [name_b, hash_b] : sb.graph.initializers) {
      std::string name_a = m.InitializerAForB(name_b);
      if (name_a.empty() && by_slot.count(name_b)) {  // another name and other values
        name_a = by_slot.at(name_b);
        used_a[name_a] = true;
        InitializerDiff id = InitDiff(DiffKind::kChanged, &sa, name_a, &sb, name_b);
        CompareValues(sa, sb, *sa.inits.at(name_a), *sb.inits.at(name_b), &id);
        d.initializers.push_back(std::move(id));
        continue;
      }
      if (name_a.empty()) {
        d.initializers.push_back(InitDiff(DiffKind::kAdded, nullptr, "", &sb, name_b));
        continue;
      }
      used_a[name_a] = true;
      InitializerDiff id = InitDiff(DiffKind::kChanged, &sa, name_a, &sb, name_b);
      if (name_a != name_b) {
        id.kind = DiffKind::kRenamed;
        d.initializers.push_back(std::move(id));
      } else if (id.sha256_a != id.sha256_b || id.dtype_a != id.dtype_b ||
                 id.shape_a != id.shape_b) {
        CompareValues(sa, sb, *sa.inits.at(name_a), *sb.inits.at(name_b), &id);
        d.initializers.push_back(std::move(id));
      } else {
        ++d.initializers_unchanged;
      }
    }
    for (const auto& [name_a, hash_a] : sa.graph.initializers) {
      if (!used_a.count(name_a))
        d.initializers.push_back(InitDiff(DiffKind::kRemoved, &sa, name_a, nullptr, ""));
    }
  } catch (const std::exception& e) {
    return Corrupt("diff of " + a.path() + " and " + b.path() + ": " + e.what());
  }
  return d;
}

}  // namespace onnxprobe
