// The graph ONNX Runtime runs after its optimizations, read back from the file it writes at
// session creation: which tensors survive fusion and can be captured without blocking it.
// Only the graph is wanted: the weights file the runtime writes beside it is a link to
// /dev/null, so a model of several GB costs no disk write and is never read back. Writing it
// still copies each weight once (one at a time): weights over the caller's limit are kept out
// of that session altogether, and the session never prepacks weights it will not run.
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <map>

#include "capture/blocked_layout.h"
#include "common/file_util.h"
#include "common/temp_registry.h"
#include "onnxprobe/capture.h"
#include "onnxprobe/graph.h"

namespace onnxprobe {
namespace {

// The nodes of the graph the runtime makes of `bytes` (a form of `model`) with `options`.
Expected<std::vector<FileNode>> RuntimeGraph(const Model& model, Backend& backend,
                                             const SessionOptions& options, std::string bytes) {
  char tmpl[] = "/tmp/onnxprobe-optimized-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return IoError("cannot create a temporary folder in /tmp");
  std::string dir = tmpl;
  RegisterTemporary(dir);
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
  RemoveAll(dir);
  UnregisterTemporary(dir);
  OP_RETURN_IF_ERROR(st);
  OP_RETURN_IF_ERROR(nodes.status().WithContext("reading the runtime's optimized graph"));
  return nodes;
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
  // gets a reorder back to the standard layout. Kept only when the graph's kernels stay the same
  // with them marked: all at once, else the rules that pass alone (then once more together);
  // the rest count as fused away, as before.
  std::vector<BlockedTensor> blocked = BlockedLayoutTensors(model.index(), nodes, present);
  auto same = [&](const std::vector<std::string>& names) {
    auto marked = LiftExternalInitializers(model, max_initializer_bytes, names);
    if (!marked.ok()) return false;
    auto with = RuntimeGraph(model, backend, options, std::move(*marked));
    return with.ok() && SameKernels(nodes, *with);
  };
  std::map<std::string, std::vector<std::string>> by_rule;
  for (const auto& b : blocked) by_rule[b.rule].push_back(b.name);
  std::vector<std::string> all;
  for (const auto& b : blocked) all.push_back(b.name);
  if (all.empty()) return present;
  if (!same(all)) {
    all.clear();
    size_t passed = 0;
    std::vector<const std::vector<std::string>*> rules;  // the largest first, a few at most
    for (const auto& [rule, names] : by_rule) rules.push_back(&names);
    std::stable_sort(rules.begin(), rules.end(),
                     [](const auto* x, const auto* y) { return x->size() > y->size(); });
    rules.resize(std::min<size_t>(rules.size(), 6));
    for (const auto* names : by_rule.size() > 1 ? rules : decltype(rules)()) {
      if (!same(*names)) continue;
      all.insert(all.end(), names->begin(), names->end());
      ++passed;
    }
    if (passed > 1 && !same(all)) all.clear();
  }
  present.insert(all.begin(), all.end());
  return present;
}

}  // namespace onnxprobe
