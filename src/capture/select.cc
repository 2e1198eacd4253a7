#include <memory>
#include <regex>
#include <set>

#include "common/user_regex.h"
#include "onnxprobe/capture/capture.h"

namespace onnxprobe {

Expected<std::function<bool(const std::string&, const std::string&)>> MakeTensorMatcher(
    const TensorSelection& sel) {
  bool all = sel.names.empty() && sel.op_types.empty() && sel.regex.empty();
  auto names = std::make_shared<std::set<std::string>>(sel.names.begin(), sel.names.end());
  auto ops = std::make_shared<std::set<std::string>>(sel.op_types.begin(), sel.op_types.end());
  std::shared_ptr<std::regex> re;
  if (!sel.regex.empty()) {
    OP_ASSIGN_OR_RETURN(std::regex compiled, CompileUserRegex(sel.regex, "--regex"));
    re = std::make_shared<std::regex>(std::move(compiled));
  }
  return std::function<bool(const std::string&, const std::string&)>(
      [all, names, ops, re](const std::string& name, const std::string& op) {
        return all || names->count(name) || ops->count(op) || (re && std::regex_search(name, *re));
      });
}

Expected<std::vector<std::string>> SelectTensors(const Model& model, const TensorSelection& sel) {
  const GraphIndex& idx = model.index();
  for (const auto& n : std::set<std::string>(sel.names.begin(), sel.names.end())) {
    const TensorEntry* t = idx.Find(n);
    if (t == nullptr)
      return NotFound("tensor '" + n + "' does not exist in " + model.path() +
                      " (list them with: onnxprobe inspect --tensors)");
    if (t->kind == TensorKind::kSubgraph) {
      const NodeInfo& owner = idx.nodes()[t->subgraph_owner];
      if (owner.op_type == "If")  // a taken branch runs inlined (capture/branches.h)
        return Unsupported("tensor '" + n + "' lives in a branch of node '" + owner.name +
                           "' (If) that these inputs do not take (or that could not be inlined: "
                           "see the notes); it cannot be captured on them");
      return Unsupported("tensor '" + n + "' lives inside the body of node '" + owner.name + "' (" +
                         owner.op_type + "); subgraph tensors cannot be captured yet");
    }
    if (t->kind == TensorKind::kGraphInput || t->kind == TensorKind::kInitializer) {
      return InvalidArgument("tensor '" + n + "' is a graph " + TensorKindName(t->kind) +
                             "; only node outputs are captured");
    }
  }
  OP_ASSIGN_OR_RETURN(auto match, MakeTensorMatcher(sel));
  std::vector<std::string> out;
  for (const auto& t : idx.tensors()) {
    if (t.kind != TensorKind::kIntermediate && t.kind != TensorKind::kGraphOutput) continue;
    if (match(t.name, idx.nodes()[t.producer].op_type)) out.push_back(t.name);
  }
  if (out.empty())
    return InvalidArgument("the tensor selection matches no tensor in " + model.path());
  return out;
}

}  // namespace onnxprobe
