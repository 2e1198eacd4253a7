// Which original tensors ONNX Runtime's blocked-channel layout computes under its own names.
#include "capture/blocked_layout.h"

#include <algorithm>
#include <map>
#include <tuple>

namespace onnxprobe {
namespace {

const char kLayoutDomain[] = "com.microsoft.nchwc";

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool Intermediate(const GraphIndex& idx, const std::string& name) {
  const TensorEntry* t = idx.Find(name);
  return t != nullptr && t->kind == TensorKind::kIntermediate;
}

// The only reader of `name`, when it has one and it is of one of `ops`; null otherwise.
const NodeInfo* SoleConsumer(const GraphIndex& idx, const std::string& name,
                             const std::vector<std::string>& ops) {
  const TensorEntry* t = idx.Find(name);
  if (t == nullptr || t->consumers.size() != 1) return nullptr;
  const NodeInfo& n = idx.nodes()[t->consumers[0]];
  bool wanted = std::find(ops.begin(), ops.end(), n.op_type) != ops.end();
  return wanted && !n.outputs.empty() && !n.outputs[0].empty() ? &n : nullptr;
}

// The original tensor a node of the layout's domain computes; "" when it cannot be told. `rule`
// says how it was found (e.g. "Conv+Add+Relu": followed through the Add and the activation).
std::string ReplacedTensor(const GraphIndex& idx, const FileNode& n, std::string* rule) {
  *rule = n.op_type;
  const std::string suffix = "_nchwc";
  if (!EndsWith(n.name, suffix)) return "";
  std::string t = n.name.substr(0, n.name.size() - suffix.size());
  // a BatchNormalization run as a per-channel convolution
  if (!Intermediate(idx, t) && EndsWith(t, "_bn") && Intermediate(idx, t.substr(0, t.size() - 3)))
    t.resize(t.size() - 3);
  if (!Intermediate(idx, t)) return "";
  if (n.op_type == "Conv" && n.inputs.size() >= 4 && !n.inputs[3].empty()) {
    // the convolution sums another tensor into its result: the Add it replaced
    const NodeInfo* add = SoleConsumer(idx, t, {"Add", "Sum"});
    if (add == nullptr) return "";
    t = add->outputs[0];
    *rule += "+" + add->op_type;
  }
  auto act = n.strings.find("activation");
  if (act != n.strings.end() && !act->second.empty()) {
    // an activation fused earlier already named the tensor; one fused here follows it
    const TensorEntry* e = idx.Find(t);
    bool made_by_it = e->producer >= 0 && idx.nodes()[e->producer].op_type == act->second;
    if (!made_by_it) {
      const NodeInfo* a = SoleConsumer(idx, t, {act->second});
      if (a == nullptr) return "";
      t = a->outputs[0];
      *rule += "+" + a->op_type;
    }
  }
  return t;
}

}  // namespace

std::vector<BlockedTensor> BlockedLayoutTensors(const GraphIndex& idx,
                                                const std::vector<FileNode>& optimized,
                                                const std::set<std::string>& present) {
  std::vector<BlockedTensor> found;
  std::set<std::string> seen;
  auto add = [&](const std::string& t, const std::string& rule) {
    if (Intermediate(idx, t) && !present.count(t) && seen.insert(t).second)
      found.push_back({t, rule});
  };
  std::set<std::string> blocked;  // tensors of the optimized graph in the blocked layout
  for (const FileNode& n : optimized) {
    if (n.domain != kLayoutDomain || n.op_type == "ReorderOutput") continue;
    blocked.insert(n.outputs.begin(), n.outputs.end());
    if (n.op_type != "ReorderInput") {
      std::string rule;
      std::string t = ReplacedTensor(idx, n, &rule);
      if (!t.empty()) add(t, rule);
    }
  }
  if (blocked.empty()) return found;
  // a standard node reading a blocked tensor (an element-wise op, a Concat) works in that layout
  // too and keeps its original name; unnamed or twice-named original nodes cannot be told apart
  std::map<std::string, int> by_name;
  for (size_t i = 0; i < idx.nodes().size(); ++i) {
    const std::string& name = idx.nodes()[i].name;
    if (name.empty()) continue;
    auto [it, fresh] = by_name.emplace(name, static_cast<int>(i));
    if (!fresh) it->second = -1;
  }
  for (bool grew = true; grew;) {  // until no node joins: file order need not be topological
    grew = false;
    for (const FileNode& n : optimized) {
      if (n.domain == kLayoutDomain) continue;
      bool reads = std::any_of(n.inputs.begin(), n.inputs.end(),
                               [&](const std::string& i) { return blocked.count(i) > 0; });
      if (!reads) continue;
      bool fresh = false;
      for (const auto& o : n.outputs) fresh = (!o.empty() && blocked.insert(o).second) || fresh;
      if (!fresh) continue;
      grew = true;
      auto it = by_name.find(n.name);
      if (it == by_name.end() || it->second < 0) continue;
      const NodeInfo& orig = idx.nodes()[it->second];
      if (orig.op_type != n.op_type) continue;
      for (size_t k = 0; k < std::min(orig.outputs.size(), n.outputs.size()); ++k) {
        if (!orig.outputs[k].empty() && !n.outputs[k].empty())
          add(orig.outputs[k], "kept " + n.op_type);
      }
    }
  }
  return found;
}

bool SameKernels(const std::vector<FileNode>& x, const std::vector<FileNode>& y) {
  using Key = std::tuple<std::string, std::string, std::string, size_t, size_t>;
  auto keys = [](const std::vector<FileNode>& nodes) {
    std::vector<Key> k;
    for (const FileNode& n : nodes) {
      if (n.domain == kLayoutDomain && n.op_type == "ReorderOutput") continue;
      k.emplace_back(n.domain, n.op_type, n.attributes, n.inputs.size(), n.outputs.size());
    }
    std::sort(k.begin(), k.end());
    return k;
  };
  return keys(x) == keys(y);
}

}  // namespace onnxprobe
