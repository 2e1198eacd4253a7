// The node outputs of a model file, e.g. the optimized graph a runtime saved (its weights in a
// side file that is never opened).
#include <climits>

#include "common/file_util.h"
#include "model/model_impl.h"

namespace onnxprobe {

Expected<std::set<std::string>> ReadNodeOutputs(const std::string& path) {
  OP_RETURN_IF_ERROR(CheckModelFile(path).status());
  auto bytes = ReadFile(path);
  if (!bytes.ok()) return bytes.status();
  onnx::ModelProto proto;
  try {
    if (!proto.ParseFromString(*bytes)) return Corrupt(path + ": not a valid ONNX model");
  } catch (const std::exception& e) {
    return Corrupt(path + ": " + e.what());
  }
  std::set<std::string> present;
  for (const auto& n : proto.graph().node()) present.insert(n.output().begin(), n.output().end());
  present.erase("");
  return present;
}

}  // namespace onnxprobe
