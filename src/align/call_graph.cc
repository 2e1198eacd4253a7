#include "align/call_graph.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "common/decimal.h"
#include "onnxprobe/graph/graph.h"

namespace onnxprobe::align {
namespace {

// "/a/lin_2" -> ("/a/lin", 2); false without a numeric suffix.
bool SplitOrdinal(const std::string& s, std::string* base, int* k) {
  auto us = s.rfind('_');
  auto slash = s.rfind('/');
  if (us == std::string::npos || us + 1 >= s.size() || (slash != std::string::npos && us < slash))
    return false;
  for (size_t i = us + 1; i < s.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  if (s.size() - us - 1 > 6) return false;
  *base = s.substr(0, us);
  uint64_t v = 0;
  if (!ParseDecimal(s.substr(us + 1), INT32_MAX, &v)) return false;
  *k = static_cast<int>(v);
  return *k > 0;
}

}  // namespace

bool NodeScope(const std::string& node_name, std::string* scope) {
  if (node_name.empty() || node_name[0] != '/') return false;
  *scope = node_name.substr(0, node_name.rfind('/'));
  return true;
}

bool ScopeOf(const NodeInfo& n, std::string* scope) {
  for (const auto& o : n.outputs) {
    if (o.empty()) continue;
    // exactly ".../<Op>_output_<k>": a tool's derived name ("..._output_0__fp32") is not one
    const size_t slash = o.rfind('/'), at = o.rfind("_output_");
    if (o[0] != '/' || at == std::string::npos || at < slash || at + 8 >= o.size()) break;
    if (o.find_first_not_of("0123456789", at + 8) != std::string::npos) break;
    *scope = o.substr(0, slash);
    return true;
  }
  return NodeScope(n.name, scope);
}

CallGraph::CallGraph(const TorchCalls& calls, const Model& model) : calls_(calls), model_(model) {
  const GraphIndex& g = model.index();
  const int n_calls = static_cast<int>(calls.calls.size());
  for (int i = 0; i < n_calls; ++i) {
    if (calls.calls[i].parent < 0 && calls.calls[i].scope.empty()) {
      root_ = i;
      break;
    }
  }
  for (const auto& o : model.summary().outputs) graph_outputs_.push_back(o.name);
  for (int c = 0; c < n_calls; ++c) {
    for (const auto& names : calls.calls[c].params) {
      for (const auto& name : names) owners_[name].push_back(c);
    }
  }
  AssignNodes(calls);
  FindForeignReaders();

  // tensors that depend on a graph input (not constants or weights)
  for (const auto& in : model.summary().inputs) dynamic_.insert(in.name);
  for (const auto& n : g.nodes()) {
    bool dyn = false;
    for (const auto& i : n.inputs) dyn = dyn || (!i.empty() && dynamic_.count(i));
    for (const auto& i : n.implicit_inputs) dyn = dyn || dynamic_.count(i);
    if (dyn) dynamic_.insert(n.outputs.begin(), n.outputs.end());
  }

  // per call: its subtree's nodes, what they hand on and what they read
  nodes_.assign(n_calls, {});
  for (const auto& n : g.nodes()) {
    for (int c = owner_[n.topo_index]; c >= 0; c = calls.calls[c].parent)
      nodes_[c].push_back(n.topo_index);
  }
  std::unordered_set<std::string> is_graph_output(graph_outputs_.begin(), graph_outputs_.end());
  outputs_.assign(n_calls, {});
  inputs_.assign(n_calls, {});
  unread_.assign(n_calls, {});
  for (const auto& n : g.nodes()) {
    int c = owner_[n.topo_index];
    if (c < 0) continue;
    for (const auto& o : n.outputs) {
      const TensorEntry* e = o.empty() ? nullptr : g.Find(o);
      if (e != nullptr && e->consumers.empty() && !is_graph_output.count(o) && dynamic_.count(o))
        unread_[c].push_back(o);
    }
  }
  // ONNX Runtime's blocked-channel layout (a model saved at optimization level "all"): those
  // tensors hold another element order than any PyTorch tensor; ReorderOutput restores it
  auto blocked = [&](const std::string& t) {
    const TensorEntry* e = g.Find(t);
    if (e == nullptr || e->producer < 0) return false;
    const NodeInfo& p = g.nodes()[e->producer];
    return p.domain == "com.microsoft.nchwc" && p.op_type != "ReorderOutput";
  };
  for (int c = 0; c < n_calls; ++c) {
    std::unordered_set<std::string> seen_in;
    for (int k : nodes_[c]) {
      const NodeInfo& node = g.nodes()[k];
      for (const auto& o : node.outputs) {
        if (o.empty() || !dynamic_.count(o) || blocked(o)) continue;
        const TensorEntry* e = g.Find(o);
        bool escapes = is_graph_output.count(o) > 0;
        if (e != nullptr) {
          for (int consumer : e->consumers)
            escapes = escapes || owner_[consumer] < 0 || !IsAncestorOrSelf(c, owner_[consumer]);
        }
        if (escapes) outputs_[c].push_back(o);
      }
      auto read = [&](const std::string& i) {
        if (i.empty() || !dynamic_.count(i) || seen_in.count(i) || blocked(i)) return;
        const TensorEntry* e = g.Find(i);
        bool outside = e == nullptr || e->producer < 0 || owner_[e->producer] < 0 ||
                       !IsAncestorOrSelf(c, owner_[e->producer]);
        if (!outside) return;
        seen_in.insert(i);
        inputs_[c].push_back(i);
      };
      for (const auto& i : node.inputs) read(i);
      for (const auto& i : node.implicit_inputs) read(i);
    }
  }
}

void CallGraph::AssignNodes(const TorchCalls& calls) {
  const GraphIndex& g = model_.index();
  const int n_calls = static_cast<int>(calls.calls.size());
  owner_.assign(g.nodes().size(), root_);
  certain_.assign(n_calls, true);
  // calls by scope, in ordinal order
  std::map<std::string, std::vector<int>> family;
  for (int i = 0; i < n_calls; ++i) family[calls.calls[i].scope].push_back(i);
  for (auto& [scope, members] : family) {
    std::sort(members.begin(), members.end(), [&](int a, int b) {
      return calls.calls[a].scope_ordinal < calls.calls[b].scope_ordinal;
    });
  }
  // the exporter's groups: nodes by scope name, each read as (scope, ordinal)
  std::map<std::string, std::vector<int>> groups;
  for (const auto& n : g.nodes()) {
    std::string s;
    if (ScopeOf(n, &s)) groups[s].push_back(n.topo_index);
  }
  std::map<std::string, std::map<int, std::vector<int>>> by_family;  // scope -> ordinal -> nodes
  std::set<std::string> ambiguous;
  for (const auto& [name, nodes] : groups) {
    std::string base;
    int k = 0;
    bool exact = family.count(name) > 0;
    bool suffixed = SplitOrdinal(name, &base, &k) && family.count(base) > 0;
    if (exact && suffixed) {  // "x_1": a module named so, or the second call of "x"
      ambiguous.insert(name);
      ambiguous.insert(base);
    }
    if (exact) {
      auto& v = by_family[name][0];
      v.insert(v.end(), nodes.begin(), nodes.end());
    } else if (suffixed) {
      auto& v = by_family[base][k];
      v.insert(v.end(), nodes.begin(), nodes.end());
    }
    // scopes the capture does not know (modules without hooks) stay with the root
  }
  auto lca = [&](const std::vector<int>& members) {
    int a = members.front();
    for (int b : members) {
      while (a >= 0 && !IsAncestorOrSelf(a, b)) a = calls.calls[a].parent;
    }
    return a;
  };
  for (const auto& [scope, ordinals] : by_family) {
    const std::vector<int>& members = family[scope];
    bool consistent = !ambiguous.count(scope) && ordinals.size() == members.size() &&
                      ordinals.rbegin()->first == static_cast<int>(members.size()) - 1;
    if (consistent) {
      for (const auto& [k, nodes] : ordinals) {
        for (int n : nodes) owner_[n] = members[k];
      }
      continue;
    }
    // the nodes belong to one of these calls: give them to their common ancestor and mark the
    // calls in between as not knowing their nodes
    int common = lca(members);
    for (const auto& [k, nodes] : ordinals) {
      for (int n : nodes) owner_[n] = common;
    }
    for (int m : members) {
      for (int c = m; c >= 0 && c != common; c = calls.calls[c].parent) certain_[c] = false;
    }
  }
  AdoptInsertedNodes();
}

// Nodes a graph tool inserted carry no exporter scope (a float16 converter's Cast, an Identity,
// a quantizer's pair): by name they would belong to the root, so that a node inserted inside a
// call's span would make the call's internal tensor an output and its own output an argument.
// Each connected group of them goes to the innermost call holding every scoped node around it:
// the producers of what the group reads and the readers of what it makes (a graph input or
// output counts as the root's). An export without scopes at all is left as it is.
void CallGraph::AdoptInsertedNodes() {
  const GraphIndex& g = model_.index();
  const auto& nodes = g.nodes();
  std::vector<char> inserted(nodes.size(), 0);
  bool any_scoped = false;
  for (const auto& n : nodes) {
    std::string s;
    inserted[n.topo_index] = !ScopeOf(n, &s);
    any_scoped = any_scoped || !inserted[n.topo_index];
  }
  if (!any_scoped || root_ < 0) return;
  std::unordered_set<std::string> is_graph_output(graph_outputs_.begin(), graph_outputs_.end());
  std::vector<char> done(nodes.size(), 0);
  for (const auto& start : nodes) {
    if (!inserted[start.topo_index] || done[start.topo_index]) continue;
    std::vector<int> group = {start.topo_index};
    std::vector<int> around;  // owners of the scoped nodes next to the group
    std::set<int> reads;      // calls owning a parameter the group reads
    bool merged = false;      // a runtime fusion ran an activation that may be another call's
    done[start.topo_index] = 1;
    for (size_t k = 0; k < group.size(); ++k) {
      const NodeInfo& n = nodes[group[k]];
      merged = merged || !NodeStringAttribute(model_, n, "activation").empty();
      for (const auto& i : n.inputs) {
        auto it = owners_.find(i);
        if (it != owners_.end()) reads.insert(it->second.begin(), it->second.end());
      }
      auto visit = [&](int m) {
        if (m < 0) return;
        if (!inserted[m]) {
          around.push_back(owner_[m]);
        } else if (!done[m]) {
          done[m] = 1;
          group.push_back(m);
        }
      };
      for (const auto& i : n.inputs) {
        const TensorEntry* e = i.empty() ? nullptr : g.Find(i);
        if (e == nullptr) continue;
        if (e->kind == TensorKind::kGraphInput) around.push_back(root_);
        visit(e->producer);
      }
      for (const auto& o : n.outputs) {
        const TensorEntry* e = o.empty() ? nullptr : g.Find(o);
        if (e == nullptr) continue;
        if (is_graph_output.count(o)) around.push_back(root_);
        for (int c : e->consumers) visit(c);
      }
    }
    // a renamed node reading one call's own parameters is that call's (a Linear writing the
    // graph's output, whose name carries no scope either); not one that also ran an activation
    // fused into it (ONNX Runtime's FusedGemm of a Linear and the Tanh after the module): whose
    // that was cannot be told, so the group goes to the innermost call holding its neighbours
    // (the root, where it writes a graph output), and the parameters' call loses it
    if (reads.size() == 1 && !merged) {
      for (int m : group) owner_[m] = *reads.begin();
      continue;
    }
    if (around.empty()) continue;
    int common = around.front();
    for (int o : around) {
      while (common >= 0 && !IsAncestorOrSelf(common, o)) common = calls_.calls[common].parent;
    }
    if (common < 0) continue;
    for (int m : group) owner_[m] = common;
  }
}

void CallGraph::FindForeignReaders() {
  const GraphIndex& g = model_.index();
  foreign_.assign(g.nodes().size(), std::string());
  if (owners_.empty()) return;
  for (const auto& n : g.nodes()) {
    const int owner = owner_[n.topo_index];
    for (std::string x : n.inputs) {
      for (int hops = 0; hops < 4 && !x.empty(); ++hops) {  // a layout node the exporter added
        const TensorEntry* e = g.Find(x);
        if (e == nullptr || e->producer < 0) break;
        const NodeInfo& p = g.nodes()[e->producer];
        if (p.op_type != "Identity" && p.op_type != "Transpose" && p.op_type != "Cast") break;
        x = p.inputs.empty() ? std::string() : p.inputs[0];
      }
      auto it = owners_.find(x);
      if (it == owners_.end() || owner < 0) continue;
      const TensorEntry* e = g.Find(x);
      if (e == nullptr || e->kind != TensorKind::kInitializer) continue;
      bool around = std::any_of(it->second.begin(), it->second.end(),
                                [&](int d) { return IsAncestorOrSelf(d, owner); });
      if (!around) foreign_[n.topo_index] = x;
    }
  }
}

bool CallGraph::IsAncestorOrSelf(int ancestor, int call) const {
  for (int c = call; c >= 0; c = calls_.calls[c].parent) {
    if (c == ancestor) return true;
  }
  return false;
}

bool CallGraph::HasOp(int call, const std::string& op_type) const {
  const auto& nodes = model_.index().nodes();
  return std::any_of(nodes_[call].begin(), nodes_[call].end(),
                     [&](int k) { return nodes[k].op_type == op_type; });
}

std::set<std::string> CallGraph::InitializersRead(int call) const {
  const GraphIndex& g = model_.index();
  std::set<std::string> out;
  for (int k : nodes_[call]) {
    for (const auto& i : g.nodes()[k].inputs) {
      const TensorEntry* e = g.Find(i);
      if (e != nullptr && e->kind == TensorKind::kInitializer) out.insert(i);
    }
  }
  return out;
}

}  // namespace onnxprobe::align
