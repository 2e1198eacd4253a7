#include "onnxprobe/engine/rewrites.h"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <unordered_set>

namespace onnxprobe {
namespace {

// Ops whose single output holds the value of their first input (a Cast at another precision,
// which the comparison judges as such): a chain of them between two tensors makes the tensors
// equal, so pairing either with one tensor of the other model is right.
bool KeepsValue(const NodeInfo& n) {
  if (!n.domain.empty() && n.domain != "ai.onnx") return false;
  return n.op_type == "Identity" || n.op_type == "Cast" ||
         (n.op_type == "Dropout" && n.outputs.size() == 1);
}

// A tensor a node computes; a Constant node's output is a weight like an initializer.
bool Computed(const GraphIndex& g, const std::string& t) {
  const TensorEntry* e = g.Find(t);
  return e != nullptr && e->producer >= 0 && g.nodes()[e->producer].op_type != "Constant";
}

// Whether `to` holds the value of `from` (both of graph `g`) through value-keeping nodes only.
bool SameValue(const GraphIndex& g, const std::string& from, std::string to) {
  for (int hops = 0; hops < 64 && to != from; ++hops) {
    const TensorEntry* e = g.Find(to);
    if (e == nullptr || e->producer < 0) return false;
    const NodeInfo& n = g.nodes()[e->producer];
    if (!KeepsValue(n) || n.inputs.empty()) return false;
    to = n.inputs[0];
  }
  return to == from;
}

std::string NodeText(const NodeInfo& n) {
  return n.op_type + " '" + (n.name.empty() ? n.outputs[0] : n.name) + "'";
}

// A's nodes without a counterpart in B that compute `t` from tensors produced by matched nodes
// (or from inputs and weights), nearest first: what a rewrite folded away.
std::vector<int> FoldedNodes(const GraphIndex& g, const std::vector<int>& b_for_a,
                             const std::string& t) {
  std::vector<int> out;
  std::vector<std::string> todo{t};
  std::set<int> seen;
  while (!todo.empty() && out.size() < 16) {
    const TensorEntry* e = g.Find(todo.back());
    todo.pop_back();
    if (e == nullptr || e->producer < 0 || b_for_a[e->producer] >= 0) continue;
    if (!seen.insert(e->producer).second) continue;
    out.push_back(e->producer);
    for (const auto& x : g.nodes()[e->producer].inputs)
      if (!x.empty()) todo.push_back(x);
  }
  return out;
}

}  // namespace

RewriteAlignment AlignRewrites(const Model& a, const Model& b, const ModelDiff& diff) {
  RewriteAlignment out;
  const GraphIndex& ga = a.index();
  const GraphIndex& gb = b.index();
  if (diff.a_for_b.size() != gb.nodes().size()) return out;
  std::vector<int> b_for_a(ga.nodes().size(), -1);
  for (size_t i = 0; i < diff.a_for_b.size(); ++i) {
    int j = diff.a_for_b[i];
    if (j >= 0 && j < int(b_for_a.size())) b_for_a[j] = int(i);
  }
  // Matched nodes whose attributes differ compute another function of their inputs (onnxsim
  // merges two Transposes into the second one, which then reads the first one's input with the
  // composed perm): what such a node reads says nothing about what its A counterpart reads.
  std::unordered_set<int> attributes_changed_b;
  for (const NodeDiff& n : diff.nodes) {
    if (n.index_b >= 0 && (n.op_changed || !n.attributes.empty()))
      attributes_changed_b.insert(n.index_b);
  }
  // B tensor -> the A tensors matched nodes read where B's read it (computed tensors only: a
  // weight or graph input read at a slot is the diff's business, not a pairing)
  std::unordered_map<std::string, std::set<std::string>> implied;
  for (size_t ib = 0; ib < gb.nodes().size(); ++ib) {
    int ia = diff.a_for_b[ib];
    if (ia < 0 || attributes_changed_b.count(int(ib))) continue;
    const NodeInfo& nb = gb.nodes()[ib];
    const NodeInfo& na = ga.nodes()[ia];
    if (nb.op_type != na.op_type || nb.domain != na.domain) continue;
    // slots are positional: a fold that gives a Conv/Gemm the bias it lacked adds one at the end
    for (size_t s = 0; s < std::min(nb.inputs.size(), na.inputs.size()); ++s) {
      const std::string &tb = nb.inputs[s], &ta = na.inputs[s];
      if (tb.empty() || ta.empty() || !Computed(gb, tb) || !Computed(ga, ta)) continue;
      implied[tb].insert(ta);
    }
  }
  // graph outputs of the same name are counterparts by contract
  std::unordered_set<std::string> outputs_a;
  for (const auto& v : a.summary().outputs) outputs_a.insert(v.name);
  for (const auto& v : b.summary().outputs) {
    if (outputs_a.count(v.name) && Computed(gb, v.name)) implied[v.name].insert(v.name);
  }
  // B's nodes that compute other than their A counterparts: changed (op, attributes, inputs) or
  // reading a weight that changed. A same-named tensor whose producers match and compute alike
  // holds the same value on both sides, whatever reads it: a constant scale a tool folded
  // forward into the consumer's weights leaves the consumer reading the unscaled tensor.
  std::unordered_set<int> changed_b;
  std::unordered_map<std::string, int> b_by_name;
  for (size_t i = 0; i < gb.nodes().size(); ++i) b_by_name[gb.nodes()[i].name] = int(i);
  for (const NodeDiff& n : diff.nodes) {
    if (n.kind == DiffKind::kChanged && n.index_b >= 0) changed_b.insert(n.index_b);
  }
  for (const InitializerDiff& w : diff.initializers) {
    if (w.kind == DiffKind::kRenamed || w.kind == DiffKind::kRemoved) continue;
    for (const auto& r : w.readers) {
      auto it = b_by_name.find(r);
      if (it != b_by_name.end()) changed_b.insert(it->second);
    }
  }
  // an A tensor claimed by two B tensors is ambiguous: neither pairing is made
  std::unordered_map<std::string, int> claims;
  for (const auto& [tb, as] : implied) {
    if (as.size() == 1) ++claims[*as.begin()];
  }
  for (const auto& node : gb.nodes()) {  // B's topological order: the lines read top down
    for (const auto& tb : node.outputs) {
      auto it = tb.empty() ? implied.end() : implied.find(tb);
      if (it == implied.end() || it->second.size() != 1) continue;
      const std::string& ta = *it->second.begin();
      if (ta == tb || claims[ta] != 1) continue;
      const TensorEntry* eb = gb.Find(tb);
      const NodeInfo& pb = gb.nodes()[eb->producer];
      // A's tensor of B's name, where A has one, holds the same value (an Identity removed); or
      // B's tensor of A's name holds what B's consumers read (a Cast inserted): names pair right
      bool same_named = Computed(ga, tb);
      if (same_named && SameValue(ga, tb, ta)) continue;
      if (same_named && diff.a_for_b[size_t(eb->producer)] == ga.Find(tb)->producer &&
          !changed_b.count(eb->producer))
        continue;  // the same computation on both sides: B's tensor is A's of its name
      if (Computed(gb, ta) && SameValue(gb, ta, tb)) continue;
      out.rename[ta] = tb;
      std::vector<int> folded = FoldedNodes(ga, b_for_a, ta);
      if (same_named)
        out.distrusted[tb] =
            "B's '" + tb + "' stands for A's '" + ta + "' (a rewrite moved the name)";
      if (folded.empty()) {
        ++out.renamed;
        continue;
      }
      std::string what, ops;
      for (size_t i = 0; i < folded.size(); ++i) {
        what += (i ? ", " : "") + NodeText(ga.nodes()[folded[i]]);
        ops += (i ? "+" : "") + ga.nodes()[folded[i]].op_type;
      }
      ++out.kinds[ops + " folded into " + pb.op_type];
      out.rewrites.push_back(what + " folded into B's " + NodeText(pb) + ": B's '" + tb +
                             "' stands for A's '" + ta + "'" +
                             (same_named ? " (A's '" + tb + "' is not paired)" : ""));
    }
  }
  // a rename made for an A name that is itself distrusted pairs it: it is no longer distrusted
  for (const auto& [ta, tb] : out.rename) out.distrusted.erase(ta);
  return out;
}

}  // namespace onnxprobe
