// The graph ONNX Runtime runs after its optimizations, read back from the file it writes at
// session creation: which tensors survive fusion and can be captured without blocking it.
// Only the graph is wanted: the weights file the runtime writes beside it is a link to
// /dev/null, so a model of several GB costs no disk write and is never read back. Writing it
// still copies each weight once (one at a time): weights over the caller's limit are kept out
// of that session altogether, and the session never prepacks weights it will not run.
#include <stdlib.h>
#include <unistd.h>

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
  // with all of them marked; otherwise they count as fused away, as before.
  std::vector<std::string> blocked = BlockedLayoutTensors(model.index(), nodes, present);
  if (blocked.empty()) return present;
  auto marked = LiftExternalInitializers(model, max_initializer_bytes, blocked);
  if (!marked.ok()) return present;
  auto with = RuntimeGraph(model, backend, options, std::move(*marked));
  if (with.ok() && SameKernels(nodes, *with)) present.insert(blocked.begin(), blocked.end());
  return present;
}

}  // namespace onnxprobe
