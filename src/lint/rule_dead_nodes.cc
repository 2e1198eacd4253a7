// OP009: nodes whose outputs reach no graph output (liveness backwards from the outputs;
// tensors read by If/Loop/Scan bodies keep their producers alive).
#include <unordered_set>

#include "lint/rules.h"

namespace onnxprobe::lint {

void CheckDeadNodes(const LintContext& ctx, std::vector<LintFinding>* out) {
  const auto& nodes = ctx.nodes();
  // liveness backwards from the graph outputs (subgraph bodies keep what they read alive)
  std::vector<bool> live(nodes.size(), false);
  std::unordered_set<std::string> needed;
  for (const auto& o : ctx.proto().graph().output()) needed.insert(o.name());
  for (int k = int(nodes.size()) - 1; k >= 0; --k) {
    for (const auto& o : nodes[k].outputs) live[k] = live[k] || (!o.empty() && needed.count(o));
    if (!live[k]) continue;
    for (const auto& i : nodes[k].inputs) needed.insert(i);
    for (const auto& i : nodes[k].implicit_inputs) needed.insert(i);
  }
  for (size_t k = 0; k < nodes.size(); ++k) {
    if (live[k]) continue;
    const NodeInfo& n = nodes[k];
    bool read = false;
    for (const auto& o : n.outputs) read = read || (!o.empty() && ctx.IsRead(o));
    LintFinding f = MakeFinding(LintSeverity::kWarning, &n);
    f.tensor = n.outputs.empty() ? "" : n.outputs[0];
    f.message = NodeLabel(n) + (read ? " feeds only nodes that reach no graph output"
                                     : " has outputs no node reads and no graph output names");
    f.why =
        "the runtime may still execute it (cost) or prune it silently; either way its result "
        "never reaches an output, which often means an output was dropped at export or a "
        "surgery disconnected a branch";
    f.fix =
        "add the intended tensor as a graph output, or remove the dead nodes "
        "(onnx-simplifier, onnx.utils.extract_model)";
    out->push_back(std::move(f));
  }
}

}  // namespace onnxprobe::lint
