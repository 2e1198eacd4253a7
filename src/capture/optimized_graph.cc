// The graph ONNX Runtime runs after its optimizations, read back from the file it writes at
// session creation: which tensors survive fusion and can be captured without blocking it.
// Only the graph is wanted: the weights file the runtime writes beside it is a link to
// /dev/null, so a model of several GB costs no disk write and is never read back. Writing it
// still copies each weight once (one at a time): weights over the caller's limit are kept out
// of that session altogether, and the session never prepacks weights it will not run.
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <map>

#include "capture/blocked_layout.h"
#include "common/file_util.h"
#include "onnxprobe/capture/capture.h"
#include "onnxprobe/graph/graph.h"

namespace onnxprobe {
namespace {

// The nodes of the graph the runtime makes of `bytes` (a form of `model`) with `options`.
Expected<std::vector<FileNode>> RuntimeGraph(const Model& model, Backend& backend,
                                             const SessionOptions& options, std::string bytes) {
  OP_ASSIGN_OR_RETURN(std::string dir, MakeTemporaryFolder("onnxprobe-optimized"));
  SessionOptions o = options;
  o.save_optimized_model = dir + "/optimized.onnx";
  // packing weights for kernels happens after the graph is final: not needed to read it
  o.config_entries.emplace("session.disable_prepacking", "1");
  std::string weights = dir + "/" + kOptimizedModelWeightsFile;
  Status st = symlink("/dev/null", weights.c_str()) == 0
                  ? Status::Ok()
                  : IoError("cannot create a link in " + dir);
  if (st.ok()) {
    auto session = backend.CreateSession(bytes, model.dir(), o);
    st = session.ok() ? Status::Ok() : session.status().WithContext(model.path());
  }
  bytes.clear();
  bytes.shrink_to_fit();
  Expected<std::vector<FileNode>> nodes =
      st.ok() ? ReadGraphNodes(o.save_optimized_model) : Expected<std::vector<FileNode>>(st);
  RemoveTemporary(dir);
  OP_RETURN_IF_ERROR(st);
  OP_RETURN_IF_ERROR(nodes.status().WithContext("reading the runtime's optimized graph"));
  return nodes;
}

// The blocked tensors whose marking leaves the kernels the same (`same`): all at once, else the
// groups found by one rule that pass alone (the six largest), confirmed once more together. The
// rest count as fused away.
std::vector<std::string> ConfirmedBlocked(
    const std::vector<BlockedTensor>& blocked,
    const std::function<bool(const std::vector<std::string>&)>& same) {
  std::vector<std::string> all;
  std::map<std::string, std::vector<std::string>> by_rule;
  for (const auto& b : blocked) {
    all.push_back(b.name);
    by_rule[b.rule].push_back(b.name);
  }
  if (all.empty() || same(all)) return all;
  if (by_rule.size() < 2) return {};
  std::vector<const std::vector<std::string>*> groups;
  for (const auto& [rule, names] : by_rule) groups.push_back(&names);
  std::stable_sort(groups.begin(), groups.end(),
                   [](const auto* x, const auto* y) { return x->size() > y->size(); });
  groups.resize(std::min<size_t>(groups.size(), 6));
  std::vector<std::string> kept;
  size_t passed = 0;
  for (const auto* names : groups) {
    if (!same(*names)) continue;
    kept.insert(kept.end(), names->begin(), names->end());
    ++passed;
  }
  return passed > 1 && !same(kept) ? std::vector<std::string>() : kept;
}

}  // namespace

Expected<std::set<std::string>> OptimizedGraphTensors(const Model& model, Backend& backend,
                                                      const SessionOptions& options,
                                                      uint64_t max_initializer_bytes) {
  OP_ASSIGN_OR_RETURN(std::string bytes, LiftExternalInitializers(model, max_initializer_bytes));
  OP_ASSIGN_OR_RETURN(auto nodes, RuntimeGraph(model, backend, options, std::move(bytes)));
  std::set<std::string> present;
  for (const FileNode& n : nodes) present.insert(n.outputs.begin(), n.outputs.end());
  present.erase("");
  // tensors the runtime keeps in its blocked layout under its own names: marked as outputs, each
  // gets a reorder back to the standard layout
  auto same = [&](const std::vector<std::string>& names) {
    auto marked = LiftExternalInitializers(model, max_initializer_bytes, names);
    if (!marked.ok()) return false;
    auto with = RuntimeGraph(model, backend, options, std::move(*marked));
    return with.ok() && SameKernels(nodes, *with);
  };
  std::vector<std::string> all =
      ConfirmedBlocked(BlockedLayoutTensors(model.index(), nodes, present), same);
  present.insert(all.begin(), all.end());
  return present;
}

}  // namespace onnxprobe
