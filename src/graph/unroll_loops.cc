// Loop and Scan nodes replaced by their bodies, one copy per iteration (UnrollLoops, graph.h).
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "model/model_impl.h"
#include "onnxprobe/graph/graph.h"
#include "tensor/tensor_proto_convert.h"

namespace onnxprobe {
namespace {

int64_t Opset(const onnx::ModelProto& p) {
  for (const auto& o : p.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx") return o.version();
  return 0;
}

const onnx::AttributeProto* Attr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return &a;
  return nullptr;
}

int64_t IntAt(const onnx::AttributeProto* a, int k, int64_t def) {
  return a != nullptr && k < a->ints_size() ? a->ints(k) : def;
}

// Renames the inputs of `g`'s nodes, and of the graphs nested in them, found in `names`.
void RenameReads(onnx::GraphProto* g, const std::unordered_map<std::string, std::string>& names) {
  for (auto& n : *g->mutable_node()) {
    for (auto& x : *n.mutable_input()) {
      auto it = names.find(x);
      if (it != names.end()) x = it->second;
    }
    for (auto& a : *n.mutable_attribute()) {
      if (a.has_g()) RenameReads(a.mutable_g(), names);
      for (auto& s : *a.mutable_graphs()) RenameReads(&s, names);
    }
  }
}

class Unroller {
 public:
  Unroller(onnx::GraphProto* g, int64_t opset) : g_(g), opset_(opset) {
    for (const auto& v : g->input()) taken_.insert(v.name());
    for (const auto& t : g->initializer()) taken_.insert(t.name());
    for (const auto& n : g->node()) {
      taken_.insert(n.output().begin(), n.output().end());
      taken_.insert(n.name());
    }
  }

  std::string Unique(const std::string& base) {
    std::string n = base;
    for (int k = 1; taken_.count(n); ++k) n = base + "_" + std::to_string(k);
    taken_.insert(n);
    return n;
  }

  std::string Int64(const std::string& base, int64_t v, bool scalar) {
    onnx::TensorProto* t = g_->add_initializer();
    t->set_name(Unique(base));
    t->set_data_type(onnx::TensorProto::INT64);
    if (!scalar) t->add_dims(1);
    t->add_int64_data(v);
    return t->name();
  }

  // One iteration's copy of `body` into `out`: the names the body defines get "@t", its inputs
  // read `feeds`; returns the names its outputs have in the copy.
  Expected<std::vector<std::string>> Copy(
      const onnx::GraphProto& body, const std::string& owner, int64_t t,
      const std::vector<std::string>& feeds,
      google::protobuf::RepeatedPtrField<onnx::NodeProto>* out) {
    std::unordered_map<std::string, std::string> names;
    for (int i = 0; i < body.input_size() && i < int(feeds.size()); ++i)
      names[body.input(i).name()] = feeds[size_t(i)];
    const std::string at = "@" + std::to_string(t);
    for (const auto& n : body.node()) {
      for (const auto& o : n.output()) {
        if (!o.empty()) names[o] = Unique(o + at);
      }
    }
    for (const auto& init : body.initializer()) {  // one copy serves every iteration
      if (!shared_.insert(owner + "/" + init.name()).second) {
        names[init.name()] = weights_[owner + "/" + init.name()];
        continue;
      }
      onnx::TensorProto* w = g_->add_initializer();
      *w = init;
      w->set_name(Unique(init.name()));
      weights_[owner + "/" + init.name()] = w->name();
      names[init.name()] = w->name();
    }
    int k = 0;
    for (const auto& n : body.node()) {
      onnx::NodeProto* c = out->Add();
      *c = n;
      c->set_name(Unique(
          (n.name().empty() ? owner + "/" + n.op_type() + std::to_string(k) : n.name()) + at));
      ++k;
      for (auto& o : *c->mutable_output()) {
        if (!o.empty()) o = names.at(o);
      }
    }
    // reads (also inside graphs the body's nodes hold) follow the renaming
    onnx::GraphProto copied;
    for (int i = out->size() - body.node_size(); i < out->size(); ++i)
      *copied.add_node() = out->Get(i);
    RenameReads(&copied, names);
    for (int i = 0; i < body.node_size(); ++i)
      *out->Mutable(out->size() - body.node_size() + i) = copied.node(i);
    std::vector<std::string> outs;
    for (const auto& v : body.output()) {
      auto it = names.find(v.name());
      outs.push_back(it == names.end() ? v.name() : it->second);  // an outer-scope name
    }
    return outs;
  }

  void Add(google::protobuf::RepeatedPtrField<onnx::NodeProto>* out, const std::string& op,
           const std::string& name, std::vector<std::string> in, const std::string& result,
           int64_t axis, bool with_axis) {
    onnx::NodeProto* n = out->Add();
    n->set_op_type(op);
    n->set_name(Unique(name));
    for (auto& x : in) n->add_input(x);
    n->add_output(result);
    if (with_axis) {
      auto* a = n->add_attribute();
      a->set_name("axis");
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(axis);
    }
  }

  // `slices` (one per iteration, in order) stacked along `axis` into `result`.
  void Stack(google::protobuf::RepeatedPtrField<onnx::NodeProto>* out, const std::string& owner,
             const std::vector<std::string>& slices, int64_t axis, const std::string& result) {
    std::vector<std::string> grown;
    for (const auto& s : slices) {
      std::string u = Unique(s + "/unsqueezed");
      onnx::NodeProto* n = out->Add();
      n->set_op_type("Unsqueeze");
      n->set_name(Unique(owner + "/stack/" + s));
      n->add_input(s);
      if (opset_ >= 13) {
        n->add_input(Int64(owner + "/axis", axis, false));
      } else {
        auto* a = n->add_attribute();
        a->set_name("axes");
        a->set_type(onnx::AttributeProto::INTS);
        a->add_ints(axis);
      }
      n->add_output(u);
      grown.push_back(u);
    }
    Add(out, "Concat", owner + "/stack", grown, result, axis, true);
  }

  onnx::GraphProto* g_;
  int64_t opset_;
  std::unordered_set<std::string> taken_, shared_;
  std::unordered_map<std::string, std::string> weights_;
};

}  // namespace

std::vector<LoopCount> CountableLoops(const Model& model) {
  std::vector<LoopCount> out;
  // the indexed graph: its nodes and attributes, small weights with their values and large ones
  // with their shapes only (never the file's weights parsed again: a run stays light)
  const onnx::GraphProto& graph = model.impl().proto.graph();
  std::unordered_map<std::string, const onnx::TensorProto*> inits;
  for (const auto& t : graph.initializer()) inits[t.name()] = &t;
  for (const NodeInfo& info : model.index().nodes()) {
    bool onnx_domain = info.domain.empty() || info.domain == "ai.onnx";
    if (!onnx_domain || (info.op_type != "Loop" && info.op_type != "Scan") || info.outputs.empty())
      continue;
    const onnx::NodeProto& n = graph.node(info.file_index);
    LoopCount c;
    c.node = info.name.empty() ? info.outputs[0] : info.name;
    c.first_output = info.outputs[0];
    const onnx::AttributeProto* body = Attr(n, "body");
    if (body == nullptr || !body->has_g()) continue;
    c.body_nodes = size_t(body->g().node_size());
    if (info.op_type == "Scan") {
      const onnx::AttributeProto* m = Attr(n, "num_scan_inputs");
      int M = m != nullptr ? int(m->i()) : 0, N = n.input_size() - M;
      if (M <= 0 || N < 0) continue;
      c.tensor = n.input(N);  // the first scan input: its length along its axis
      c.axis = IntAt(Attr(n, "scan_input_axes"), 0, 0);
    } else {
      const int N = n.input_size() - 2, K = body->g().output_size() - 1 - N;
      if (K > 0) {
        c.tensor = info.outputs[size_t(N)];  // a scan output stacks one slice per iteration
      } else if (n.input_size() > 1 && n.input(1).empty() && !n.input(0).empty()) {
        c.tensor = n.input(0);  // no condition: the trip count is the count
        c.trip_count = true;
      } else {
        c.why_not = "its iteration count depends on its condition and no scan output counts them";
      }
    }
    auto w = c.tensor.empty() ? inits.end() : inits.find(c.tensor);
    if (w != inits.end()) {  // a weight: read here
      if (c.trip_count) {
        auto v = TensorFromProto(*w->second, model.path() + ": " + c.tensor);
        if (v.ok() && v->num_elements() == 1) c.known = int64_t(ElementAsDouble(*v, 0));
      } else {
        int64_t rank = w->second->dims_size(), axis = c.axis < 0 ? c.axis + rank : c.axis;
        if (axis >= 0 && axis < rank) c.known = w->second->dims(int(axis));
      }
    }
    out.push_back(std::move(c));
  }
  return out;
}

Expected<std::string> UnrollLoops(const Model& model,
                                  const std::map<std::string, int64_t>& iterations) {
  OP_ASSIGN_OR_RETURN(onnx::ModelProto p, model.impl().EditableProto(model.path()));
  onnx::GraphProto* g = p.mutable_graph();
  Unroller u(g, Opset(p));
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  for (const onnx::NodeProto& n : g->node()) {
    bool onnx_domain = n.domain().empty() || n.domain() == "ai.onnx";
    auto it = n.output_size() > 0 ? iterations.find(n.output(0)) : iterations.end();
    if (!onnx_domain || (n.op_type() != "Loop" && n.op_type() != "Scan") ||
        it == iterations.end() || it->second <= 0) {
      *nodes.Add() = n;
      continue;
    }
    const std::string owner = n.name().empty() ? n.output(0) : n.name();
    const onnx::AttributeProto* body_attr = Attr(n, "body");
    if (body_attr == nullptr || !body_attr->has_g())
      return Corrupt(model.path() + ": " + n.op_type() + " " + owner + " has no body");
    const onnx::GraphProto& body = body_attr->g();
    const int64_t T = it->second;
    if (n.op_type() == "Loop") {
      // inputs: M, cond, v_initial (N); body: iter, cond_in, v (N) -> cond_out, v (N), scans (K)
      const int N = n.input_size() - 2;
      const int K = body.output_size() - 1 - N;
      if (N < 0 || K < 0 || body.input_size() != N + 2)
        return Corrupt(model.path() + ": Loop " + owner + "'s body does not match its inputs");
      std::vector<std::string> state(n.input().begin() + 2, n.input().end());
      std::vector<std::vector<std::string>> scans(static_cast<size_t>(K));
      for (int64_t t = 0; t < T; ++t) {
        onnx::NodeProto* cond = nodes.Add();  // the iteration ran: its condition held
        cond->set_op_type("Constant");
        cond->set_name(u.Unique(owner + "/cond@" + std::to_string(t)));
        cond->add_output(u.Unique(owner + "/cond@" + std::to_string(t)));
        auto* v = cond->add_attribute();
        v->set_name("value");
        v->set_type(onnx::AttributeProto::TENSOR);
        v->mutable_t()->set_data_type(onnx::TensorProto::BOOL);
        v->mutable_t()->add_int32_data(1);
        std::vector<std::string> feeds{u.Int64(owner + "/iter@" + std::to_string(t), t, true),
                                       cond->output(0)};
        feeds.insert(feeds.end(), state.begin(), state.end());
        OP_ASSIGN_OR_RETURN(auto outs, u.Copy(body, owner, t, feeds, &nodes));
        state.assign(outs.begin() + 1, outs.begin() + 1 + N);
        for (int k = 0; k < K; ++k) scans[size_t(k)].push_back(outs[size_t(1 + N + k)]);
      }
      for (int i = 0; i < N && i < n.output_size(); ++i) {
        if (!n.output(i).empty())
          u.Add(&nodes, "Identity", owner + "/final/" + std::to_string(i), {state[size_t(i)]},
                n.output(i), 0, false);
      }
      for (int k = 0; k < K && N + k < n.output_size(); ++k) {
        if (!n.output(N + k).empty()) u.Stack(&nodes, owner, scans[size_t(k)], 0, n.output(N + k));
      }
      continue;
    }
    // Scan: inputs: states (N), scan inputs (M); body: states, slices -> states, scan slices (K)
    const onnx::AttributeProto* m_attr = Attr(n, "num_scan_inputs");
    const int M = m_attr != nullptr ? int(m_attr->i()) : 0;
    const int N = n.input_size() - M;
    const int K = body.output_size() - N;
    if (M <= 0 || N < 0 || K < 0 || body.input_size() != N + M)
      return Corrupt(model.path() + ": Scan " + owner + "'s body does not match its inputs");
    const auto *in_axes = Attr(n, "scan_input_axes"), *in_dirs = Attr(n, "scan_input_directions");
    const auto *out_axes = Attr(n, "scan_output_axes"),
               *out_dirs = Attr(n, "scan_output_directions");
    std::vector<std::string> state(n.input().begin(), n.input().begin() + N);
    std::vector<std::vector<std::string>> scans(static_cast<size_t>(K));
    for (int64_t t = 0; t < T; ++t) {
      std::vector<std::string> feeds = state;
      for (int j = 0; j < M; ++j) {
        int64_t index = IntAt(in_dirs, j, 0) == 1 ? T - 1 - t : t;
        std::string slice = u.Unique(n.input(N + j) + "@" + std::to_string(t));
        u.Add(&nodes, "Gather", owner + "/slice@" + std::to_string(t),
              {n.input(N + j), u.Int64(owner + "/index@" + std::to_string(index), index, true)},
              slice, IntAt(in_axes, j, 0), true);
        feeds.push_back(slice);
      }
      OP_ASSIGN_OR_RETURN(auto outs, u.Copy(body, owner, t, feeds, &nodes));
      state.assign(outs.begin(), outs.begin() + N);
      for (int k = 0; k < K; ++k) scans[size_t(k)].push_back(outs[size_t(N + k)]);
    }
    for (int i = 0; i < N && i < n.output_size(); ++i) {
      if (!n.output(i).empty())
        u.Add(&nodes, "Identity", owner + "/final/" + std::to_string(i), {state[size_t(i)]},
              n.output(i), 0, false);
    }
    for (int k = 0; k < K && N + k < n.output_size(); ++k) {
      if (n.output(N + k).empty()) continue;
      std::vector<std::string> slices = scans[size_t(k)];
      if (IntAt(out_dirs, k, 0) == 1) std::reverse(slices.begin(), slices.end());
      u.Stack(&nodes, owner, slices, IntAt(out_axes, k, 0), n.output(N + k));
    }
  }
  g->mutable_node()->Swap(&nodes);
  return p.SerializeAsString();
}

}  // namespace onnxprobe
