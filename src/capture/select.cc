#include <regex>
#include <set>

#include "onnxprobe/capture.h"

namespace onnxprobe {

Expected<std::vector<std::string>> SelectTensors(const Model& model, const TensorSelection& sel) {
  const GraphIndex& idx = model.index();
  bool all = sel.names.empty() && sel.op_types.empty() && sel.regex.empty();
  std::set<std::string> names(sel.names.begin(), sel.names.end());
  for (const auto& n : names) {
    const TensorEntry* t = idx.Find(n);
    if (t == nullptr)
      return NotFound("tensor '" + n + "' does not exist in " + model.path() +
                      " (list them with: onnxprobe inspect --tensors)");
    if (t->kind == TensorKind::kSubgraph) {
      const NodeInfo& owner = idx.nodes()[t->subgraph_owner];
      return Unsupported("tensor '" + n + "' lives inside the body of node '" + owner.name + "' (" +
                         owner.op_type + "); subgraph tensors cannot be captured yet");
    }
    if (t->kind == TensorKind::kGraphInput || t->kind == TensorKind::kInitializer) {
      return InvalidArgument("tensor '" + n + "' is a graph " + TensorKindName(t->kind) +
                             "; only node outputs are captured");
    }
  }
  std::set<std::string> ops(sel.op_types.begin(), sel.op_types.end());
  std::regex re;
  if (!sel.regex.empty()) {
    try {
      re = std::regex(sel.regex, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return InvalidArgument("bad --regex '" + sel.regex + "': " + e.what());
    }
  }
  std::vector<std::string> out;
  for (const auto& t : idx.tensors()) {
    if (t.kind != TensorKind::kIntermediate && t.kind != TensorKind::kGraphOutput) continue;
    const NodeInfo& node = idx.nodes()[t.producer];
    bool take = all || names.count(t.name) || ops.count(node.op_type) ||
                (!sel.regex.empty() && std::regex_search(t.name, re));
    if (take) out.push_back(t.name);
  }
  if (out.empty())
    return InvalidArgument("the tensor selection matches no tensor in " + model.path());
  return out;
}

}  // namespace onnxprobe
