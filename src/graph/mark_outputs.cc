// Protobuf merges repeated occurrences of a message field, so the extra outputs are appended by
// concatenating a tiny ModelProto{graph{output...}} after the cached serialization: the weights
// are never copied again.
#include "graph/outputs_tail.h"
#include "model/model_impl.h"
#include "onnxprobe/graph/graph.h"

namespace onnxprobe {

Expected<std::string> OutputsTail(const Model& model, const std::vector<std::string>& extra) {
  const GraphIndex& idx = model.index();
  onnx::ModelProto tail;
  auto* g = tail.mutable_graph();
  for (const auto& name : extra) {
    const TensorEntry* t = idx.Find(name);
    if (t == nullptr) return NotFound("tensor '" + name + "' does not exist in " + model.path());
    if (t->kind == TensorKind::kGraphOutput) continue;
    if (t->kind == TensorKind::kSubgraph) {
      return Unsupported("tensor '" + name + "' lives inside the body of node '" +
                         idx.nodes()[t->subgraph_owner].name + "' (" +
                         idx.nodes()[t->subgraph_owner].op_type +
                         "); subgraph tensors cannot be captured");
    }
    if (t->kind != TensorKind::kIntermediate) {
      return InvalidArgument("tensor '" + name + "' is a graph " + TensorKindName(t->kind) +
                             ", not a node output");
    }
    auto* o = g->add_output();
    o->set_name(name);
    if (const ValueInfo* vi = model.FindValueInfo(name); vi != nullptr && vi->elem_type != 0) {
      o->mutable_type()->mutable_tensor_type()->set_elem_type(vi->elem_type);
    }
  }
  return tail.SerializeAsString();
}

Expected<std::string> MarkOutputs(const Model& model, const std::vector<std::string>& extra) {
  OP_RETURN_IF_ERROR(model.impl().RequireBytes());
  OP_ASSIGN_OR_RETURN(std::string tail_bytes, OutputsTail(model, extra));
  // one copy of the weights: sized for the tail up front, so appending never reallocates
  const std::string& serialized = model.impl().SerializedProto();
  std::string bytes;
  bytes.reserve(serialized.size() + tail_bytes.size());
  bytes.append(serialized).append(tail_bytes);
  return bytes;
}

}  // namespace onnxprobe
