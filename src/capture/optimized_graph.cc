// The graph ONNX Runtime runs after its optimizations, read back from the file it writes at
// session creation: which tensors survive fusion and can be captured without blocking it.
// Only the graph is wanted: the weights file the runtime writes beside it is a link to
// /dev/null, so a model of several GB costs no disk write and is never read back. Writing it
// still copies each weight once (one at a time): weights over the caller's limit are kept out
// of that session altogether, and the session never prepacks weights it will not run.
#include <stdlib.h>
#include <unistd.h>

#include "common/file_util.h"
#include "common/temp_registry.h"
#include "onnxprobe/capture.h"
#include "onnxprobe/graph.h"

namespace onnxprobe {

Expected<std::set<std::string>> OptimizedGraphTensors(const Model& model, Backend& backend,
                                                      const SessionOptions& options,
                                                      uint64_t max_initializer_bytes) {
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
    auto bytes = LiftExternalInitializers(model, max_initializer_bytes);
    auto session = bytes.ok() ? backend.CreateSession(*bytes, model.dir(), o)
                              : Expected<std::unique_ptr<BackendSession>>(bytes.status());
    st = session.ok() ? Status::Ok() : session.status().WithContext(model.path());
  }
  Expected<std::set<std::string>> present =
      st.ok() ? ReadNodeOutputs(o.save_optimized_model) : Expected<std::set<std::string>>(st);
  RemoveAll(dir);
  UnregisterTemporary(dir);
  OP_RETURN_IF_ERROR(st);
  OP_RETURN_IF_ERROR(present.status().WithContext("reading the runtime's optimized graph"));
  return present;
}

}  // namespace onnxprobe
