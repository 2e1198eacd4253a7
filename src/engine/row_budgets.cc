#include "engine/row_budgets.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace onnxprobe {

namespace {

bool IsPeriodic(const std::string& op_type) { return op_type == "Sin" || op_type == "Cos"; }

// Ops whose first output is a value rounded to a quantization grid and held as integers: two
// implementations (a fused integer kernel, the float ops it replaces followed by a rounding) may
// land on the two grid points around a value that lies within their float rounding of a rounding
// boundary, one step apart. MatMulInteger/ConvInteger are not among them: their int32
// accumulators are exact, and a difference there is a kernel's, not rounding's.
bool RoundsToGrid(const NodeInfo& n) {
  static const std::set<std::string> kOps = {"QuantizeLinear",
                                             "DynamicQuantizeLinear",
                                             "QLinearConv",
                                             "QLinearMatMul",
                                             "QLinearAdd",
                                             "QLinearMul",
                                             "QLinearAveragePool",
                                             "QLinearGlobalAveragePool",
                                             "QLinearConcat",
                                             "QLinearLeakyRelu",
                                             "QLinearSigmoid",
                                             "QLinearSoftmax",
                                             "QLinearReduceMean",
                                             "QLinearConvTranspose",
                                             "QGemm",
                                             "QLinearWhere"};
  return kOps.count(n.op_type) > 0;
}

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
  out.quant_step = QuantStep(*n, name_b);
  return out;
}

double RowBudgets::QuantStep(const NodeInfo& n, const std::string& name_b) const {
  if (n.outputs.empty() || n.outputs[0] != name_b) return 0;
  if (RoundsToGrid(n)) return 1;
  if (n.op_type != "DequantizeLinear" || n.inputs.size() < 2 || n.inputs[1].empty()) return 0;
  // a weight's DequantizeLinear computes exactly the same on every side: a step of difference
  // there is a changed weight, not rounding
  const TensorEntry* q = graph_->index().Find(n.inputs[0]);
  bool computed = q != nullptr && q->producer >= 0 &&
                  graph_->index().nodes()[q->producer].op_type != "Constant";
  if (!computed) return 0;
  auto cached = dequantize_scale_.find(n.inputs[1]);
  if (cached != dequantize_scale_.end()) return cached->second;
  double step = 0;  // a scale computed at run time (dynamic quantization): not known here
  auto scale = ConstantTensor(*graph_, n.inputs[1]);
  if (scale.ok()) {
    for (uint64_t i = 0; i < scale->num_elements(); ++i)
      step = std::max(step, std::abs(ElementAsDouble(*scale, i)));
  }
  dequantize_scale_[n.inputs[1]] = step;
  return step;
}

double RowBudgets::CarriedRoundoff(const std::string& name_b) const {
  if (graph_ == nullptr) return 0;
  if (!carried_) {
    if (!types_) types_ = InferTensorTypes(*graph_);
    carried_.emplace();
    auto& u = *carried_;
    const GraphIndex& idx = graph_->index();
    auto own = [&](const std::string& t) {
      auto it = types_->find(t);
      return it != types_->end() && IsFloating(it->second) ? UnitRoundoff(it->second) : 0.0;
    };
    auto of = [&](const std::string& t) {
      auto it = u.find(t);
      return it != u.end() ? it->second : own(t);
    };
    const std::set<std::string> fixed = TensorsFixedByModel(idx);
    for (const NodeInfo& n : idx.nodes()) {  // topological order
      double in = 0;
      if (n.op_type == "Cast" || MovesDataOnly(n.op_type)) {
        if (!n.inputs.empty() && !n.inputs[0].empty()) in = of(n.inputs[0]);
      } else {
        bool any = false;
        double least = 0;
        for (const auto& x : n.inputs) {
          const TensorEntry* e = x.empty() ? nullptr : idx.Find(x);
          if (e == nullptr || e->kind == TensorKind::kInitializer || fixed.count(x) || own(x) == 0)
            continue;
          least = any ? std::min(least, of(x)) : of(x);
          any = true;
        }
        in = any ? least : 0;
      }
      for (const auto& o : n.outputs) {
        if (!o.empty() && own(o) > 0) u[o] = std::max(own(o), in);
      }
    }
  }
  auto it = carried_->find(name_b);
  return it == carried_->end() ? 0 : it->second;
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
