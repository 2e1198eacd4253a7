// The graph ONNX Runtime runs after its optimizations, read back from the file it writes at
// session creation: which tensors survive fusion and can be captured without blocking it.
#include <stdlib.h>

#include "common/file_util.h"
#include "common/temp_registry.h"
#include "onnxprobe/capture.h"
#include "onnxprobe/graph.h"

namespace onnxprobe {

Expected<std::set<std::string>> OptimizedGraphTensors(const Model& model, Backend& backend,
                                                      const SessionOptions& options) {
  char tmpl[] = "/tmp/onnxprobe-optimized-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return IoError("cannot create a temporary folder in /tmp");
  std::string dir = tmpl;
  RegisterTemporary(dir);
  SessionOptions o = options;
  o.save_optimized_model = dir + "/optimized.onnx";
  auto bytes = MarkOutputs(model, {});
  Status st = bytes.ok() ? Status::Ok() : bytes.status();
  if (st.ok()) {
    auto session = backend.CreateSession(*bytes, model.dir(), o);
    st = session.ok() ? Status::Ok() : session.status().WithContext(model.path());
  }
  Expected<Model> optimized = st.ok() ? Model::Load(o.save_optimized_model) : Expected<Model>(st);
  RemoveAll(dir);
  UnregisterTemporary(dir);
  OP_RETURN_IF_ERROR(st);
  OP_RETURN_IF_ERROR(optimized.status().WithContext("reading the runtime's optimized graph"));
  std::set<std::string> present;
  for (const auto& n : optimized->index().nodes())
    present.insert(n.outputs.begin(), n.outputs.end());
  return present;
}

}  // namespace onnxprobe
