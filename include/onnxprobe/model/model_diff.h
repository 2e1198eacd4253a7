// What changed between two models: nodes added, removed, changed (op, attributes, inputs) or
// renamed (matched by structure), initializers changed (SHA-256, largest difference), and
// model-level fields (IR, opsets, producer, metadata, graph inputs and outputs).
// No protobuf type appears here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "onnxprobe/common/status.h"
#include "onnxprobe/model/model.h"

namespace onnxprobe {

enum class DiffKind { kAdded, kRemoved, kChanged, kRenamed };
// "added", "removed", "changed", "renamed".
const char* DiffKindName(DiffKind k);

struct AttributeChange {
  std::string name;
  std::string a, b;  // rendered values; "" on the side without the attribute
};

struct InputChange {
  size_t slot = 0;
  std::string a, b;  // tensor names on each side; "" when the slot is absent there
};

// A node of A matched to a node of B, or present on one side only. A node matched by structure
// whose name differs is kRenamed when nothing else changed, kChanged (with renamed set)
// otherwise.
struct NodeDiff {
  DiffKind kind = DiffKind::kChanged;
  std::string name_a, name_b;      // "" on the side without the node
  std::string op_a, op_b;          // "domain.Op" outside the ONNX domain
  int index_a = -1, index_b = -1;  // topological indices; -1 on the side without the node
  bool renamed = false;            // names differ
  bool op_changed = false;
  std::vector<AttributeChange> attributes;
  // Inputs whose source differs: compared through the matching (a tensor produced by matched
  // nodes, the same initializer, the same graph input), so renaming a tensor is not a change.
  std::vector<InputChange> inputs;
};

// A weight: an initializer, or the tensor a Constant node holds. Matched by name, else by
// identical bytes, else by the slot matched nodes read it at (changed values under another name:
// kChanged with name_a != name_b).
struct InitializerDiff {
  DiffKind kind = DiffKind::kChanged;
  std::string name_a, name_b;  // renamed: same bytes under another name
  std::string dtype_a, dtype_b;
  std::vector<int64_t> shape_a, shape_b;
  std::string sha256_a, sha256_b;
  // For a change of values under the same shape: the largest |a - b| and how many elements
  // differ. Between two floating dtypes (a float16 conversion) values are compared once rounded
  // to the coarser one, named in rounded_to: a weight only converted differs nowhere. compared
  // is false when the shape or a non-float dtype changed (or values were unreadable).
  bool compared = false;
  std::string rounded_to;
  double max_abs_diff = 0;
  uint64_t num_different = 0;
  uint64_t num_elements = 0;
  // The nodes that compute with this initializer (B's, or A's for a removed one), through any
  // chain of nodes that only pass it on (Identity, Cast, Reshape, DequantizeLinear, ...): the
  // node a user looks for when a weight changed.
  std::vector<std::string> readers;
  // A weight held by a Constant node rather than an initializer: the node's name on that side
  // (name_a / name_b are then its output), "" for an initializer.
  std::string constant_a, constant_b;
};

// Model-level field: "ir_version", "opset ai.onnx", "producer_name", "metadata KEY",
// "input NAME", "output NAME", ...
struct FieldChange {
  std::string field;
  std::string a, b;  // "" when absent on that side
};

struct ModelDiff {
  std::string path_a, path_b;
  std::vector<FieldChange> fields;
  // Changed, renamed and added nodes in B's order, then removed nodes in A's order.
  std::vector<NodeDiff> nodes;
  std::vector<InitializerDiff> initializers;
  size_t nodes_a = 0, nodes_b = 0;
  size_t nodes_matched_by_name = 0, nodes_matched_by_structure = 0, nodes_unchanged = 0;
  size_t initializers_unchanged = 0;
  // The node matching: for each node of B (topological index), its A node, or -1.
  std::vector<int> a_for_b;

  bool Identical() const { return fields.empty() && nodes.empty() && initializers.empty(); }
  size_t CountNodes(DiffKind k) const;
  size_t CountInitializers(DiffKind k) const;
};

// Compares `a` with `b`. Fails only when a model's weights cannot be read.
Expected<ModelDiff> DiffModels(const Model& a, const Model& b);

// One line for other reports (e.g. a comparison of the two models): "2 nodes changed, 1 added,
// 1 renamed; 1 initializer changed (max |a-b| 0.5); opset ai.onnx 13 -> 17", or "identical
// graphs and weights".
std::string SummarizeModelDiff(const ModelDiff& d);

}  // namespace onnxprobe
