// The graph ONNX Runtime runs after its optimizations, read back from the file it writes at
// session creation: which tensors survive fusion and can be captured without blocking it.
// Only the graph is wanted: the weights file the runtime writes beside it is a link to
// /dev/null, so a model of several GB costs no disk write and is never read back.
#include <onnx/onnx_pb.h>
#include <stdlib.h>
#include <unistd.h>

#include <climits>
#include <fstream>

#include "common/file_util.h"
#include "common/temp_registry.h"
#include "onnxprobe/capture.h"
#include "onnxprobe/graph.h"

namespace onnxprobe {
namespace {

// Outputs of the main graph's nodes in the saved file (external data is not resolved).
Expected<std::set<std::string>> NodeOutputs(const std::string& path) {
  auto bytes = ReadFile(path);
  if (!bytes.ok()) return bytes.status();
  onnx::ModelProto proto;
  if (bytes->size() >= size_t(INT_MAX) || !proto.ParseFromString(*bytes))
    return Corrupt(path + ": the runtime's optimized graph does not parse");
  std::set<std::string> present;
  for (const auto& n : proto.graph().node()) present.insert(n.output().begin(), n.output().end());
  present.erase("");
  return present;
}

}  // namespace

Expected<std::set<std::string>> OptimizedGraphTensors(const Model& model, Backend& backend,
                                                      const SessionOptions& options) {
  char tmpl[] = "/tmp/onnxprobe-optimized-XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return IoError("cannot create a temporary folder in /tmp");
  std::string dir = tmpl;
  RegisterTemporary(dir);
  SessionOptions o = options;
  o.save_optimized_model = dir + "/optimized.onnx";
  // the backend names the weights file "weights.bin" (ort_session.cc)
  Status st = symlink("/dev/null", (dir + "/weights.bin").c_str()) == 0
                  ? Status::Ok()
                  : IoError("cannot create a link in " + dir);
  if (st.ok()) {
    auto bytes = MarkOutputs(model, {});
    auto session = bytes.ok() ? backend.CreateSession(*bytes, model.dir(), o)
                              : Expected<std::unique_ptr<BackendSession>>(bytes.status());
    st = session.ok() ? Status::Ok() : session.status().WithContext(model.path());
  }
  Expected<std::set<std::string>> present =
      st.ok() ? NodeOutputs(o.save_optimized_model) : Expected<std::set<std::string>>(st);
  RemoveAll(dir);
  UnregisterTemporary(dir);
  OP_RETURN_IF_ERROR(st);
  OP_RETURN_IF_ERROR(present.status().WithContext("reading the runtime's optimized graph"));
  return present;
}

}  // namespace onnxprobe
