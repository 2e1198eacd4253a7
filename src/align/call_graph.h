// The ONNX graph seen through the capture's module calls: which call's scope each node belongs
// to, the nodes of a call with all its sub-calls, and the tensors a call hands on (produced
// inside, consumed outside, or graph outputs) or reads from outside.
#pragma once

#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "align/torch_calls.h"
#include "onnxprobe/model/model.h"

namespace onnxprobe::align {

class CallGraph {
 public:
  CallGraph(const TorchCalls& calls, const Model& model);

  // The call whose own scope holds node `n` (-1: none; unscoped nodes belong to the root, nodes
  // a graph tool inserted to the innermost call around them).
  int owner(int node) const { return owner_[node]; }
  bool IsAncestorOrSelf(int ancestor, int call) const;
  // Nodes of `call` and all its sub-calls, in topological order.
  const std::vector<int>& nodes(int call) const { return nodes_[call]; }
  // False when repeated calls of a scope could not be told apart (the exporter numbers only the
  // calls that left nodes): the call's node set is then unknown.
  bool certain(int call) const { return certain_[call]; }
  // Tensors (depending on a graph input) made inside `call` and read outside it or graph outputs,
  // in topological order.
  const std::vector<std::string>& outputs(int call) const { return outputs_[call]; }
  // Tensors (depending on a graph input) read inside `call` and made outside it.
  const std::vector<std::string>& inputs(int call) const { return inputs_[call]; }
  // Computed outputs of the call's own nodes that nothing reads and that are not graph outputs
  // (a recurrent node's final state when only its sequence output is used).
  const std::vector<std::string>& unread(int call) const { return unread_[call]; }
  bool HasOp(int call, const std::string& op_type) const;
  // Whether node k reads a parameter (by name, or through an Identity, Transpose or Cast of it)
  // that no call around k owns: a fusion moved another module's work into k (ONNX Runtime's
  // SkipLayerNormalization adding the previous Linear's bias).
  bool ReadsForeignParameter(int node) const { return !foreign_[node].empty(); }
  // That parameter's name, or "".
  const std::string& ForeignParameter(int node) const { return foreign_[node]; }
  // Initializer names read by the call's nodes (directly).
  std::set<std::string> InitializersRead(int call) const;
  bool dynamic(const std::string& tensor) const { return dynamic_.count(tensor) > 0; }
  int root() const { return root_; }
  const std::vector<std::string>& graph_outputs() const { return graph_outputs_; }

 private:
  void AssignNodes(const TorchCalls& calls);
  void AdoptInsertedNodes();
  void FindForeignReaders();
  const TorchCalls& calls_;
  const Model& model_;
  int root_ = -1;
  std::vector<int> owner_;
  std::vector<bool> certain_;
  std::vector<std::string> foreign_;
  std::unordered_map<std::string, std::vector<int>> owners_;  // parameter name -> calls
  std::vector<std::vector<int>> nodes_;
  std::vector<std::vector<std::string>> outputs_, inputs_, unread_;
  std::set<std::string> dynamic_;
  std::vector<std::string> graph_outputs_;
};

// The scope of a torch-exported node name ("/layer1/layer1.0/conv1/Conv" -> "/layer1/layer1.0/
// conv1", "/Add" -> ""); false when the name carries no scope.
bool NodeScope(const std::string& node_name, std::string* scope);

// The scope a node was made in: that of its first output when the exporter named it
// ("/layer1/layer1.0/conv1/Conv_output_0"), which survives a tool renaming nodes and a fusion
// keeping its last node's output (ONNX Runtime's Conv+BatchNorm+ReLU writes ".../relu/
// Relu_output_0"); else that of the node's name. False when neither carries one.
bool ScopeOf(const NodeInfo& n, std::string* scope);

}  // namespace onnxprobe::align
