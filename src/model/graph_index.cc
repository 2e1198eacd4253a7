// Graph index: stable topological order, producers and consumers, subgraph tensors.
#include <algorithm>
#include <deque>
#include <set>
#include <unordered_set>

#include "model/model_impl.h"

namespace onnxprobe {
namespace {

// Names produced anywhere inside `g` (nodes of nested graphs included).
void CollectSubgraphOutputs(const onnx::GraphProto& g, std::vector<std::string>* out) {
  for (const auto& n : g.node()) {
    for (const auto& o : n.output()) {
      if (!o.empty()) out->push_back(o);
    }
    for (const auto& a : n.attribute()) {
      if (a.has_g()) CollectSubgraphOutputs(a.g(), out);
      for (const auto& sg : a.graphs()) CollectSubgraphOutputs(sg, out);
    }
  }
}

// Names a subgraph body reads from outside itself (implicit inputs). `enclosing` holds the
// names defined by the subgraphs between this one and the main graph.
void CollectOuterReads(const onnx::GraphProto& g, const std::unordered_set<std::string>& enclosing,
                       std::unordered_set<std::string>* reads) {
  std::unordered_set<std::string> local = enclosing;
  for (const auto& i : g.input()) local.insert(i.name());
  for (const auto& i : g.initializer()) local.insert(i.name());
  for (const auto& n : g.node()) {
    for (const auto& o : n.output()) local.insert(o);
  }
  for (const auto& n : g.node()) {
    for (const auto& i : n.input()) {
      if (!i.empty() && !local.count(i)) reads->insert(i);
    }
    for (const auto& a : n.attribute()) {
      if (a.has_g()) CollectOuterReads(a.g(), local, reads);
      for (const auto& sg : a.graphs()) CollectOuterReads(sg, local, reads);
    }
  }
}

}  // namespace

const char* TensorKindName(TensorKind k) {
  switch (k) {
    case TensorKind::kGraphInput:
      return "input";
    case TensorKind::kInitializer:
      return "initializer";
    case TensorKind::kIntermediate:
      return "intermediate";
    case TensorKind::kGraphOutput:
      return "output";
    case TensorKind::kSubgraph:
      return "subgraph";
  }
  return "?";
}

std::string GraphIndex::InitializerBehind(const std::string& name) const {
  std::string n = name;
  for (int hops = 0; hops < 8; ++hops) {  // exporters chain one Identity; 8 is generous
    const TensorEntry* e = Find(n);
    if (e == nullptr) return "";
    if (e->kind == TensorKind::kInitializer) return n;
    if (e->producer < 0) return "";
    const NodeInfo& p = nodes_[e->producer];
    if (p.op_type != "Identity" || p.inputs.size() != 1) return "";
    n = p.inputs[0];
  }
  return "";
}

const TensorEntry* GraphIndex::Find(const std::string& name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &tensors_[it->second];
}

std::vector<std::string> GraphIndex::CapturableTensors() const {
  std::vector<std::string> out;
  for (const auto& t : tensors_) {
    if (t.kind == TensorKind::kIntermediate || t.kind == TensorKind::kGraphOutput) {
      out.push_back(t.name);
    }
  }
  return out;
}

Status BuildGraphIndex(const onnx::GraphProto& g, GraphIndex* index) {
  std::unordered_set<std::string> available;
  std::unordered_set<std::string> initializers;
  for (const auto& t : g.initializer()) initializers.insert(t.name());
  for (const auto& t : g.sparse_initializer()) initializers.insert(t.values().name());
  for (const auto& i : g.input()) available.insert(i.name());
  for (const auto& t : initializers) available.insert(t);

  const int n = g.node_size();
  std::unordered_map<std::string, int> producer_of;
  for (int i = 0; i < n; ++i) {
    for (const auto& o : g.node(i).output()) {
      if (o.empty()) continue;
      if (producer_of.count(o) || available.count(o)) {
        return InvalidArgument("tensor '" + o + "' is produced more than once (node '" +
                               g.node(i).name() + "')");
      }
      producer_of[o] = i;
    }
  }
  // Kahn's algorithm; dependencies include tensors read implicitly by subgraph bodies.
  std::vector<std::vector<int>> users(n);
  std::vector<int> pending(n, 0);
  std::vector<std::vector<std::string>> implicit_of(n);
  for (int i = 0; i < n; ++i) {
    std::unordered_set<std::string> needs, implicit;
    for (const auto& in : g.node(i).input()) {
      if (!in.empty()) needs.insert(in);
    }
    for (const auto& a : g.node(i).attribute()) {
      if (a.has_g()) CollectOuterReads(a.g(), {}, &implicit);
      for (const auto& sg : a.graphs()) CollectOuterReads(sg, {}, &implicit);
    }
    implicit_of[i].assign(implicit.begin(), implicit.end());
    std::sort(implicit_of[i].begin(), implicit_of[i].end());
    for (const auto& in : implicit) {
      // a body may read names the runtime resolves itself; only order after known producers
      auto it = producer_of.find(in);
      if (it != producer_of.end() && it->second != i && !needs.count(in)) {
        users[it->second].push_back(i);
        ++pending[i];
      }
    }
    for (const auto& in : needs) {
      auto it = producer_of.find(in);
      if (it != producer_of.end()) {
        users[it->second].push_back(i);
        ++pending[i];
      } else if (!available.count(in)) {
        return InvalidArgument("node '" + g.node(i).name() + "' (" + g.node(i).op_type() +
                               ") reads tensor '" + in +
                               "' that no node, input or initializer provides");
      }
    }
  }
  std::vector<int> order;
  order.reserve(n);
  // FIFO over nodes seeded in file order keeps independent nodes close to their file order.
  std::deque<int> queue;
  for (int i = 0; i < n; ++i) {
    if (pending[i] == 0) queue.push_back(i);
  }
  while (!queue.empty()) {
    int i = queue.front();
    queue.pop_front();
    order.push_back(i);
    for (int u : users[i]) {
      if (--pending[u] == 0) queue.push_back(u);
    }
  }
  if (static_cast<int>(order.size()) != n) {
    for (int i = 0; i < n; ++i) {
      if (pending[i] > 0) {
        return InvalidArgument("graph has a cycle through node '" + g.node(i).name() + "' (" +
                               g.node(i).op_type() + ")");
      }
    }
  }
  std::vector<NodeInfo> node_infos;
  for (int k = 0; k < n; ++k) {
    const auto& p = g.node(order[k]);
    NodeInfo ni;
    ni.name = p.name();
    ni.op_type = p.op_type();
    ni.domain = p.domain();
    ni.inputs.assign(p.input().begin(), p.input().end());
    ni.outputs.assign(p.output().begin(), p.output().end());
    ni.topo_index = k;
    ni.file_index = order[k];
    ni.implicit_inputs = implicit_of[order[k]];
    for (const auto& a : p.attribute()) {
      if (a.has_g() || a.graphs_size() > 0) ni.has_subgraph = true;
    }
    node_infos.push_back(std::move(ni));
  }
  std::unordered_set<std::string> outputs;
  for (const auto& o : g.output()) outputs.insert(o.name());

  std::vector<TensorEntry> tensors;
  for (const auto& i : g.input()) {
    if (initializers.count(i.name())) continue;
    tensors.push_back({i.name(), TensorKind::kGraphInput, -1, {}, -1});
  }
  for (const auto& t : g.initializer())
    tensors.push_back({t.name(), TensorKind::kInitializer, -1, {}, -1});
  for (int k = 0; k < n; ++k) {
    for (const auto& o : node_infos[k].outputs) {
      if (o.empty()) continue;
      TensorKind kind = outputs.count(o) ? TensorKind::kGraphOutput : TensorKind::kIntermediate;
      tensors.push_back({o, kind, k, {}, -1});
    }
  }
  for (int k = 0; k < n; ++k) {
    if (!node_infos[k].has_subgraph) continue;
    std::vector<std::string> inner;
    for (const auto& a : g.node(order[k]).attribute()) {
      if (a.has_g()) CollectSubgraphOutputs(a.g(), &inner);
      for (const auto& sg : a.graphs()) CollectSubgraphOutputs(sg, &inner);
    }
    for (auto& s : inner) tensors.push_back({s, TensorKind::kSubgraph, -1, {}, k});
  }
  std::unordered_map<std::string, size_t> by_name;
  for (size_t i = 0; i < tensors.size(); ++i) by_name.emplace(tensors[i].name, i);
  for (int k = 0; k < n; ++k) {
    for (const auto& in : node_infos[k].inputs) {
      auto it = by_name.find(in);
      if (!in.empty() && it != by_name.end()) {
        auto& c = tensors[it->second].consumers;
        if (c.empty() || c.back() != k) c.push_back(k);
      }
    }
  }
  ModelLoader::Fill(index, std::move(node_infos), std::move(tensors), std::move(by_name));
  return Status::Ok();
}

namespace {

// A node whose outputs the model fixes once its inputs are fixed: not one holding a subgraph, and
// not a source without inputs other than Constant (a random generator).
bool ComputesFixedOutputs(const NodeInfo& n) {
  return !n.has_subgraph && !(n.inputs.empty() && n.op_type != "Constant");
}

}  // namespace

bool MovesDataOnly(const std::string& op_type) {
  static const std::set<std::string> kOps = {
      "Identity", "Reshape", "Flatten",      "Squeeze",      "Unsqueeze",     "Transpose",
      "Concat",   "Split",   "Slice",        "Gather",       "Expand",        "Tile",
      "Pad",      "Resize",  "DepthToSpace", "SpaceToDepth", "GatherElements"};
  // Resize: nearest-mode copies; other modes are convex combinations of what they read, whose
  // absolute error they never exceed. Pad: the pad value is exact.
  return kOps.count(op_type) > 0;
}

bool FixedByModel(const GraphIndex& idx, const std::string& name, int depth) {
  if (name.empty()) return true;  // an omitted optional input
  const TensorEntry* e = idx.Find(name);
  if (e == nullptr || e->kind == TensorKind::kGraphInput) return false;
  if (e->kind == TensorKind::kInitializer) return true;
  if (e->producer < 0 || depth >= 64) return false;
  const NodeInfo& n = idx.nodes()[e->producer];
  if (!ComputesFixedOutputs(n)) return false;
  for (const auto& in : n.inputs) {
    if (!FixedByModel(idx, in, depth + 1)) return false;
  }
  return true;
}

std::set<std::string> TensorsFixedByModel(const GraphIndex& idx) {
  std::set<std::string> fixed;
  for (const auto& n : idx.nodes()) {  // topological order: producers first
    if (!ComputesFixedOutputs(n)) continue;
    bool all = true;
    for (const auto& in : n.inputs) {
      if (in.empty() || fixed.count(in)) continue;
      const TensorEntry* e = idx.Find(in);
      all = all && e != nullptr && e->kind == TensorKind::kInitializer;
    }
    if (!all) continue;
    for (const auto& o : n.outputs) {
      if (!o.empty()) fixed.insert(o);
    }
  }
  return fixed;
}

}  // namespace onnxprobe
