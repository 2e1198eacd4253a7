// Attributes of a main-graph node, read from the model's graph.
#include "model/model_impl.h"
#include "onnxprobe/graph.h"

namespace onnxprobe {

int64_t NodeIntAttribute(const Model& model, const NodeInfo& node, const std::string& name,
                         int64_t def) {
  const auto& g = model.impl().proto.graph();
  if (node.file_index < 0 || node.file_index >= g.node_size()) return def;
  for (const auto& a : g.node(node.file_index).attribute()) {
    if (a.name() == name && a.type() == onnx::AttributeProto::INT) return a.i();
  }
  return def;
}

std::string NodeStringAttribute(const Model& model, const NodeInfo& node, const std::string& name) {
  const auto& g = model.impl().proto.graph();
  if (node.file_index < 0 || node.file_index >= g.node_size()) return "";
  for (const auto& a : g.node(node.file_index).attribute()) {
    if (a.name() == name && a.type() == onnx::AttributeProto::STRING) return a.s();
  }
  return "";
}

}  // namespace onnxprobe
