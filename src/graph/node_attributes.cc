// Attributes of a main-graph node, read from the model's graph.
#include "model/model_impl.h"
#include "onnxprobe/graph/graph.h"

namespace onnxprobe {
namespace {

// The attribute `name` of `node` when it has that type; null otherwise.
const onnx::AttributeProto* FindAttribute(const Model& model, const NodeInfo& node,
                                          const std::string& name,
                                          onnx::AttributeProto::AttributeType type) {
  const auto& g = model.impl().proto.graph();
  if (node.file_index < 0 || node.file_index >= g.node_size()) return nullptr;
  for (const auto& a : g.node(node.file_index).attribute()) {
    if (a.name() == name && a.type() == type) return &a;
  }
  return nullptr;
}

}  // namespace

int64_t NodeIntAttribute(const Model& model, const NodeInfo& node, const std::string& name,
                         int64_t def) {
  const auto* a = FindAttribute(model, node, name, onnx::AttributeProto::INT);
  return a != nullptr ? a->i() : def;
}

std::vector<std::pair<std::string, float>> NodeFloatAttributes(const Model& model,
                                                               const NodeInfo& node) {
  std::vector<std::pair<std::string, float>> out;
  const auto& g = model.impl().proto.graph();
  if (node.file_index < 0 || node.file_index >= g.node_size()) return out;
  for (const auto& a : g.node(node.file_index).attribute()) {
    if (a.type() == onnx::AttributeProto::FLOAT) out.emplace_back(a.name(), a.f());
  }
  return out;
}

std::string NodeStringAttribute(const Model& model, const NodeInfo& node, const std::string& name) {
  const auto* a = FindAttribute(model, node, name, onnx::AttributeProto::STRING);
  return a != nullptr ? a->s() : "";
}

}  // namespace onnxprobe
