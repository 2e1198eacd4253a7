// OP012: nodes without a name (one finding for all of them, on the first) and names used by
// more than one node (one finding per name).
#include <map>

#include "lint/rules.h"

namespace onnxprobe::lint {

void CheckNodeNames(const LintContext& ctx, std::vector<LintFinding>* out) {
  const char* kWhy =
      "profilers, ONNX Runtime's logs, Netron, Model Explorer and onnxprobe's reports identify "
      "nodes by name; ONNX Runtime invents names for unnamed nodes at load time, so a report "
      "cannot be traced back to the file, and a duplicated name points at two nodes";
  const char* kFix =
      "give every node a unique name (the exporter does; after hand surgery, "
      "for i, n in enumerate(graph.node): n.name = n.name or f\"{n.op_type}_{i}\")";
  std::vector<const NodeInfo*> unnamed;
  std::map<std::string, std::vector<const NodeInfo*>> by_name;
  std::vector<std::string> order;
  for (const NodeInfo& n : ctx.nodes()) {
    if (n.name.empty()) {
      unnamed.push_back(&n);
      continue;
    }
    auto& v = by_name[n.name];
    if (v.size() == 1) order.push_back(n.name);
    v.push_back(&n);
  }
  if (!unnamed.empty()) {
    LintFinding f = MakeFinding(LintSeverity::kInfo, unnamed.front());
    f.tensor = unnamed.front()->outputs.empty() ? "" : unnamed.front()->outputs[0];
    f.message = std::to_string(unnamed.size()) + " of " + std::to_string(ctx.nodes().size()) +
                " nodes have no name (first: " + NodeLabel(*unnamed.front()) + " producing '" +
                f.tensor + "')";
    f.why = kWhy;
    f.fix = kFix;
    out->push_back(std::move(f));
  }
  for (const std::string& name : order) {
    const auto& v = by_name[name];
    LintFinding f = MakeFinding(LintSeverity::kInfo, v[1]);
    f.message = std::to_string(v.size()) + " nodes are named '" + name + "' (" + v[0]->op_type +
                " #" + std::to_string(v[0]->topo_index) + ", " + v[1]->op_type + " #" +
                std::to_string(v[1]->topo_index) + (v.size() > 2 ? ", ..." : "") + ")";
    f.why = kWhy;
    f.fix = kFix;
    out->push_back(std::move(f));
  }
}

}  // namespace onnxprobe::lint
