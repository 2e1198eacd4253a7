// Internal: what every lint rule reads. Included only by .cc files of lint/ (it pulls in the
// generated protobuf header).
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "onnxprobe/lint/lint.h"
#include "onnxprobe/model/model.h"

namespace onnxprobe::lint {

class LintContext {
 public:
  // `full` is the model with its weights (Model::Impl::FullProto()).
  LintContext(const Model& model, const onnx::ModelProto& full, const LintOptions& options);

  const Model& model() const { return model_; }
  const onnx::ModelProto& proto() const { return proto_; }
  const LintOptions& options() const { return options_; }
  const std::vector<NodeInfo>& nodes() const { return model_.index().nodes(); }
  const onnx::NodeProto& Proto(const NodeInfo& n) const {
    return proto_.graph().node(n.file_index);
  }

  // Version of the default ("" / "ai.onnx") or another domain's opset import; 0 when absent.
  int64_t Opset(const std::string& domain = "") const;

  // The initializer of that name in the main graph, or null.
  const onnx::TensorProto* Initializer(const std::string& name) const;
  // True when `name` is an initializer or the output of a Constant node.
  bool IsConstant(const std::string& name) const;
  // The value of a constant tensor (initializer, or Constant node in any of its value forms).
  // kNotFound when `name` is not constant; other errors when its bytes cannot be read.
  Expected<Tensor> ConstantValue(const std::string& name) const;
  // The node producing `name` (topological index into nodes()), or -1.
  int Producer(const std::string& name) const;
  // Nodes reading `name` (explicit inputs), in topological order.
  std::vector<int> Consumers(const std::string& name) const;
  // True when some node (or a subgraph body) reads `name`.
  bool IsRead(const std::string& name) const { return read_.count(name) > 0; }
  bool IsGraphOutput(const std::string& name) const { return graph_outputs_.count(name) > 0; }

  // Type and shape from the file's value_info or ONNX 1.12 shape inference (advisory); null
  // when unknown.
  const ValueInfo* Type(const std::string& name) const;
  // True when a graph input has a dimension that is not a fixed number.
  bool HasDynamicInput() const { return dynamic_input_; }

  // Notes for the report (what could not be checked).
  void Note(const std::string& s) const { notes_.push_back(s); }
  std::vector<std::string> TakeNotes() const { return std::move(notes_); }

 private:
  const Model& model_;
  const onnx::ModelProto& proto_;
  const LintOptions& options_;
  std::unordered_map<std::string, const onnx::TensorProto*> initializers_;
  std::unordered_map<std::string, const onnx::NodeProto*> constant_nodes_;
  std::unordered_set<std::string> read_, graph_outputs_;
  std::unordered_map<std::string, ValueInfo> types_;
  bool dynamic_input_ = false;
  mutable std::vector<std::string> notes_;
};

// Attribute helpers: the attribute of that name, or null / the default.
const onnx::AttributeProto* FindAttr(const onnx::NodeProto& n, const std::string& name);
int64_t AttrInt(const onnx::NodeProto& n, const std::string& name, int64_t def);
float AttrFloat(const onnx::NodeProto& n, const std::string& name, float def);
std::string AttrString(const onnx::NodeProto& n, const std::string& name, const std::string& def);

// "%g" of a value.
std::string Num(double v);
// A finding about node `n` (null for model-level ones); the driver fills code and rule.
LintFinding MakeFinding(LintSeverity s, const NodeInfo* n);
// "'name' (Op)", or "unnamed Op #k" for a node without a name.
std::string NodeLabel(const NodeInfo& n);

}  // namespace onnxprobe::lint
