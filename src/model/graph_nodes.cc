// The nodes of a model file, e.g. the optimized graph a runtime saved (its weights in a side
// file that is never opened).
#include <algorithm>
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
    // by name (a runtime may write them in any order); a body or a tensor by its size only:
    // enough to tell two kernels apart, without copying a subgraph's weights
    std::vector<const onnx::AttributeProto*> attrs;
    for (const auto& a : n.attribute()) attrs.push_back(&a);
    std::sort(attrs.begin(), attrs.end(),
              [](const auto* x, const auto* y) { return x->name() < y->name(); });
    for (const auto* a : attrs) {
      if (a->type() == onnx::AttributeProto::STRING) f.strings.emplace(a->name(), a->s());
      bool payload = a->has_g() || a->graphs_size() > 0 || a->has_t() || a->tensors_size() > 0 ||
                     a->has_sparse_tensor() || a->sparse_tensors_size() > 0;
      std::string one = payload
                            ? std::to_string(a->type()) + "#" + std::to_string(a->ByteSizeLong())
                            : a->SerializeAsString();
      f.attributes += a->name() + "=" + std::to_string(one.size()) + ":" + one;
    }
    nodes.push_back(std::move(f));
  }
  return nodes;
}

}  // namespace onnxprobe
