// The graph ONNX Runtime runs after its optimizations, read back from the file it writes at
// session creation: which tensors survive fusion and can be captured without blocking it.
// Only the graph is wanted: the weights file the runtime writes beside it is a link to
// /dev/null, so a model of several GB costs no disk write and is never read back. Writing it
// still copies each weight once (one at a time): weights over the caller's limit are kept out
// of that session altogether, and the session never prepacks weights it will not run. A caller
// that runs a session with tensors marked as outputs can have that session's own graph checked
// against the model's (KeptForCapture) instead of confirming in sessions of their own.
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

// A session of `bytes` (a form of `model`) with `options`, and the nodes of the graph the runtime
// made of it (read back from the optimized model it writes at creation).
struct SessionGraph {
  std::unique_ptr<BackendSession> session;
  std::vector<FileNode> nodes;
};
Expected<SessionGraph> CreateWithGraph(const Model& model, Backend& backend,
                                       const SessionOptions& options, std::string bytes) {
  OP_ASSIGN_OR_RETURN(std::string dir, MakeTemporaryFolder("onnxprobe-optimized"));
  SessionOptions o = options;
  o.save_optimized_model = dir + "/optimized.onnx";
  std::string weights = dir + "/" + kOptimizedModelWeightsFile;
  Status st = symlink("/dev/null", weights.c_str()) == 0
                  ? Status::Ok()
                  : IoError("cannot create a link in " + dir);
  SessionGraph out;
  if (st.ok()) {
    auto session = backend.CreateSession(bytes, model.dir(), o);
    st = session.ok() ? Status::Ok() : session.status().WithContext(model.path());
    if (session.ok()) out.session = std::move(*session);
  }
  bytes.clear();
  bytes.shrink_to_fit();
  Expected<std::vector<FileNode>> nodes =
      st.ok() ? ReadGraphNodes(o.save_optimized_model) : Expected<std::vector<FileNode>>(st);
  RemoveTemporary(dir);
  OP_RETURN_IF_ERROR(st);
  OP_RETURN_IF_ERROR(nodes.status().WithContext("reading the runtime's optimized graph"));
  out.nodes = std::move(*nodes);
  return out;
}

// The nodes of the graph the runtime makes of `bytes` (a form of `model`) with `options`.
Expected<std::vector<FileNode>> RuntimeGraph(const Model& model, Backend& backend,
                                             const SessionOptions& options, std::string bytes) {
  SessionOptions o = options;
  // packing weights for kernels happens after the graph is final: not needed to read it
  o.config_entries.emplace("session.disable_prepacking", "1");
  OP_ASSIGN_OR_RETURN(SessionGraph made, CreateWithGraph(model, backend, o, std::move(bytes)));
  return std::move(made.nodes);
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

// The graph the runtime runs for `model`, its blocked-layout tensors not yet confirmed.
struct OptimizedGraph {
  std::vector<FileNode> nodes;         // the optimized graph's nodes
  std::set<std::string> present;       // node outputs it keeps under their names
  std::vector<BlockedTensor> blocked;  // tensors of `model` it keeps in the blocked layout
};
Expected<OptimizedGraph> ReadOptimizedGraph(const Model& model, Backend& backend,
                                            const SessionOptions& options,
                                            uint64_t max_initializer_bytes) {
  OP_ASSIGN_OR_RETURN(std::string bytes, LiftExternalInitializers(model, max_initializer_bytes));
  OptimizedGraph g;
  OP_ASSIGN_OR_RETURN(g.nodes, RuntimeGraph(model, backend, options, std::move(bytes)));
  for (const FileNode& n : g.nodes) g.present.insert(n.outputs.begin(), n.outputs.end());
  g.present.erase("");
  g.blocked = BlockedLayoutTensors(model.index(), g.nodes, g.present);
  return g;
}

// `graph.present` and the blocked tensors whose marking as outputs leaves the kernels the same,
// tried in sessions of their own: all at once, else by the rule that found them.
std::set<std::string> ConfirmBlocked(const OptimizedGraph& graph, const Model& model,
                                     Backend& backend, const SessionOptions& options,
                                     uint64_t max_initializer_bytes) {
  // tensors the runtime keeps in its blocked layout under its own names: marked as outputs, each
  // gets a reorder back to the standard layout
  auto same = [&](const std::vector<std::string>& names) {
    auto marked = LiftExternalInitializers(model, max_initializer_bytes, names);
    if (!marked.ok()) return false;
    auto with = RuntimeGraph(model, backend, options, std::move(*marked));
    return with.ok() && SameKernels(graph.nodes, *with);
  };
  std::set<std::string> present = graph.present;
  for (auto& name : ConfirmedBlocked(graph.blocked, same)) present.insert(std::move(name));
  return present;
}

// A session of `bytes` (`model` with outputs marked) made with `options`, and in `same` whether
// the graph the runtime made of it runs the kernels of `graph` (the model as is): marking those
// outputs then blocked no fusion.
Expected<std::unique_ptr<BackendSession>> CreateSessionKeepingKernels(
    const Model& model, Backend& backend, std::string bytes, const SessionOptions& options,
    const OptimizedGraph& graph, bool* same) {
  OP_ASSIGN_OR_RETURN(SessionGraph made,
                      CreateWithGraph(model, backend, options, std::move(bytes)));
  *same = SameKernels(graph.nodes, made.nodes);
  return std::move(made.session);
}

}  // namespace

Expected<std::set<std::string>> OptimizedGraphTensors(const Model& model, Backend& backend,
                                                      const SessionOptions& options,
                                                      uint64_t max_initializer_bytes) {
  OP_ASSIGN_OR_RETURN(auto graph,
                      ReadOptimizedGraph(model, backend, options, max_initializer_bytes));
  return ConfirmBlocked(graph, model, backend, options, max_initializer_bytes);
}

Expected<KeptTensors> KeptForCapture(const Model& model, Backend& backend,
                                     const SessionOptions& options, uint64_t max_initializer_bytes,
                                     const std::vector<std::string>& candidates,
                                     const SessionOptions* session_options) {
  OP_ASSIGN_OR_RETURN(OptimizedGraph graph,
                      ReadOptimizedGraph(model, backend, options, max_initializer_bytes));
  std::set<std::string> outputs;
  for (const auto& o : model.summary().outputs) outputs.insert(o.name);
  KeptTensors out;
  auto keep = [&](const std::set<std::string>& present) {
    out.kept.clear();
    for (const auto& n : candidates) {
      if (outputs.count(n) || present.count(n)) out.kept.insert(n);
    }
  };
  std::set<std::string> present = graph.present;
  for (const auto& b : graph.blocked) present.insert(b.name);
  keep(present);
  bool confirmed = graph.blocked.empty();
  if (!confirmed && session_options != nullptr) {
    std::vector<std::string> names;
    for (const auto& n : candidates) {
      if (out.kept.count(n)) names.push_back(n);
    }
    auto bytes = MarkOutputs(model, names);
    if (bytes.ok()) {
      auto session = CreateSessionKeepingKernels(model, backend, std::move(*bytes),
                                                 *session_options, graph, &confirmed);
      confirmed = confirmed && session.ok();
      if (confirmed) out.session = std::move(*session);
    }
  }
  if (!confirmed) keep(ConfirmBlocked(graph, model, backend, options, max_initializer_bytes));
  return out;
}

}  // namespace onnxprobe
