#include "engine/row_budgets.h"

#include <algorithm>
#include <set>

namespace onnxprobe {

bool MovesDataOnly(const std::string& op_type) {
  static const std::set<std::string> kOps = {
      "Identity", "Reshape", "Flatten",      "Squeeze",      "Unsqueeze",     "Transpose",
      "Concat",   "Split",   "Slice",        "Gather",       "Expand",        "Tile",
      "Pad",      "Resize",  "DepthToSpace", "SpaceToDepth", "GatherElements"};
  // Resize: nearest-mode copies; other modes are convex combinations of what they read, whose
  // absolute error they never exceed. Pad: the pad value is exact.
  return kOps.count(op_type) > 0;
}

namespace {

bool IsPeriodic(const std::string& op_type) { return op_type == "Sin" || op_type == "Cos"; }

}  // namespace

const NodeInfo* RowBudgets::Producer(const std::string& name_b) const {
  if (graph_ == nullptr) return nullptr;
  const TensorEntry* e = graph_->index().Find(name_b);
  if (e == nullptr || e->producer < 0) return nullptr;
  return &graph_->index().nodes()[e->producer];
}

bool RowBudgets::ReadsEarlierRows(const std::string& name_b) const {
  const NodeInfo* n = Producer(name_b);
  return n != nullptr && (IsPeriodic(n->op_type) || MovesDataOnly(n->op_type));
}

RowBudget RowBudgets::For(const std::string& name_b) const {
  RowBudget out;
  const NodeInfo* n = Producer(name_b);
  if (n == nullptr) return out;
  if (IsPeriodic(n->op_type) && !n->inputs.empty()) {
    auto s = scale_.find(n->inputs[0]);
    if (s != scale_.end()) out.argument_scale = s->second;
  }
  if (MovesDataOnly(n->op_type)) {
    for (const auto& in : n->inputs) out.carried = std::max(out.carried, Allowance(in, 0));
  }
  return out;
}

double RowBudgets::CarriedRoundoff(const std::string& name_b) const {
  const NodeInfo* first = Producer(name_b);
  if (first == nullptr || (first->op_type != "Cast" && !MovesDataOnly(first->op_type))) return 0;
  if (!types_) types_ = InferTensorTypes(*graph_);
  double u = 0;
  const NodeInfo* n = Producer(name_b);
  for (int depth = 0; n != nullptr && depth < 16 && !n->inputs.empty() &&
                      (n->op_type == "Cast" || MovesDataOnly(n->op_type));
       ++depth) {
    auto t = types_->find(n->inputs[0]);
    if (t != types_->end() && IsFloating(t->second)) u = std::max(u, UnitRoundoff(t->second));
    n = Producer(n->inputs[0]);
  }
  return u;
}

double RowBudgets::Allowance(const std::string& name, int depth) const {
  if (name.empty()) return 0;
  if (auto it = allowed_.find(name); it != allowed_.end()) return it->second;
  const TensorEntry* e = graph_->index().Find(name);
  // through uncompared tensors of data-movement chains only (a bounded walk: 16 such nodes)
  if (e == nullptr || e->producer < 0 || depth >= 16) return 0;
  const NodeInfo& n = graph_->index().nodes()[e->producer];
  if (!MovesDataOnly(n.op_type)) return 0;
  double a = 0;
  for (const auto& in : n.inputs) a = std::max(a, Allowance(in, depth + 1));
  return a;
}

void RowBudgets::Record(const TensorResult& row) {
  if (graph_ == nullptr || row.state == RowState::kNotCompared) return;
  scale_[row.name_b] = row.metrics.scale;
  if (row.tolerance.noise_floor > 0) allowed_[row.name_b] = row.tolerance.noise_floor;
}

}  // namespace onnxprobe
