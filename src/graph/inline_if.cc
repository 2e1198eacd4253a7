// If nodes replaced by the branch they take for given conditions (InlineIfBranches, graph.h).
#include <unordered_set>

#include "model/model_impl.h"
#include "onnxprobe/graph/graph.h"

namespace onnxprobe {

Expected<std::string> InlineIfBranches(const Model& model,
                                       const std::map<std::string, bool>& taken) {
  OP_ASSIGN_OR_RETURN(onnx::ModelProto p, model.impl().EditableProto(model.path()));
  onnx::GraphProto* g = p.mutable_graph();
  std::unordered_set<std::string> names;  // every name the main graph defines
  for (const auto& v : g->input()) names.insert(v.name());
  for (const auto& t : g->initializer()) names.insert(t.name());
  for (const auto& n : g->node()) names.insert(n.output().begin(), n.output().end());
  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  for (const onnx::NodeProto& n : g->node()) {
    bool onnx_domain = n.domain().empty() || n.domain() == "ai.onnx";
    auto cond = n.output_size() > 0 ? taken.find(n.output(0)) : taken.end();
    if (n.op_type() != "If" || !onnx_domain || cond == taken.end()) {
      *nodes.Add() = n;
      continue;
    }
    const char* which = cond->second ? "then_branch" : "else_branch";
    const onnx::GraphProto* branch = nullptr;
    for (const auto& a : n.attribute())
      if (a.name() == which && a.has_g()) branch = &a.g();
    const std::string if_name = n.name().empty() ? n.output(0) : n.name();
    if (branch == nullptr) return Corrupt(model.path() + ": If " + if_name + " has no " + which);
    if (branch->output_size() != n.output_size())
      return Corrupt(model.path() + ": If " + if_name + "'s " + which + " has " +
                     std::to_string(branch->output_size()) + " outputs, the node " +
                     std::to_string(n.output_size()));
    auto define = [&](const std::string& x) -> Status {
      if (x.empty() || names.insert(x).second) return Status::Ok();
      return Unsupported(model.path() + ": If " + if_name + "'s " + which + " defines '" + x +
                         "', a name the main graph has: it cannot be inlined");
    };
    for (const auto& t : branch->initializer()) {
      OP_RETURN_IF_ERROR(define(t.name()));
      *g->add_initializer() = t;
    }
    for (const auto& b : branch->node()) {
      for (const auto& o : b.output()) OP_RETURN_IF_ERROR(define(o));
      *nodes.Add() = b;
    }
    for (const auto& v : branch->value_info()) *g->add_value_info() = v;
    for (int k = 0; k < n.output_size(); ++k) {
      if (n.output(k).empty()) continue;
      onnx::NodeProto* id = nodes.Add();
      id->set_op_type("Identity");
      id->set_name(if_name + "/taken/" + std::to_string(k));
      id->add_input(branch->output(k).name());
      id->add_output(n.output(k));
    }
  }
  g->mutable_node()->Swap(&nodes);
  return p.SerializeAsString();
}

}  // namespace onnxprobe
