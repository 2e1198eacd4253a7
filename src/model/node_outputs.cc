// The nodes of a model file, e.g. the optimized graph a runtime saved (its weights in a side
// file that is never opened).
#include <climits>

#include "common/file_util.h"
#include "model/model_impl.h"

namespace onnxprobe {

Expected<std::vector<FileNode>> ReadGraphNodes(const std::string& path) {
  OP_RETURN_IF_ERROR(CheckModelFile(path).status());
  auto bytes = ReadFile(path);
  if (!bytes.ok()) return bytes.status();
  onnx::ModelProto proto;
  try {
    if (!proto.ParseFromString(*bytes)) return Corrupt(path + ": not a valid ONNX model");
  } catch (const std::exception& e) {
    return Corrupt(path + ": " + e.what());
  }
  std::vector<FileNode> nodes;
  nodes.reserve(proto.graph().node_size());
  for (const auto& n : proto.graph().node()) {
    FileNode f{n.name(),
               n.op_type(),
               n.domain(),
               {n.input().begin(), n.input().end()},
               {n.output().begin(), n.output().end()},
               {},
               {}};
    for (const auto& a : n.attribute()) {
      if (a.type() == onnx::AttributeProto::STRING) f.strings.emplace(a.name(), a.s());
      std::string one = a.SerializeAsString();
      f.attributes += std::to_string(one.size()) + ":" + one;
    }
    nodes.push_back(std::move(f));
  }
  return nodes;
}

}  // namespace onnxprobe
