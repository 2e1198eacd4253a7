// OP003: export-time shapes baked into Reshape/Expand. A tracer records `x.view(1, -1)` or
// `t.expand(2, -1, -1)` with the sizes of the example input; when the model's inputs have
// dynamic dimensions, those constants break (or silently merge the batch) for any other size.
//
// Flagged (only when some graph input has a dynamic dimension):
// - Reshape whose constant shape has a positive number at position 0 while dimension 0 of the
//   data is dynamic, or whose constant shape is all positive numbers (no -1, no 0 to copy)
//   while the data has any dynamic dimension;
// - Expand whose constant shape has a number > 1 where the data has a dynamic dimension, or
//   whose output meets a dynamic dimension at an elementwise consumer (Add, Concat, Where, ...)
//   in a position the constant fixed to a number > 1.
#include <set>

#include "lint/rules.h"

namespace onnxprobe::lint {
namespace {

constexpr const char* kWhy =
    "the shape was recorded from the example input at export time: with any other size of the "
    "dynamic dimension the node fails, or (Reshape with -1) folds the batch into another "
    "dimension and every later value is wrong";
constexpr const char* kFix =
    "compute the shape from the tensor in the model code (x.reshape(x.shape[0], -1), "
    "t.expand(x.shape[0], -1, -1), torch.flatten(x, 1)) so the exporter emits Shape/Gather "
    "instead of a constant; use 0 in an ONNX Reshape shape to copy a dimension";

bool Dynamic(const Dim& d) { return d.value < 0; }

std::string DimName(const Dim& d) { return d.param.empty() ? "?" : d.param; }

std::string ShapeText(const std::vector<int64_t>& v) { return ShapeToString(v); }

// The constant int64 shape input, or false.
bool ConstShape(const LintContext& ctx, const std::string& name, std::vector<int64_t>* out) {
  if (name.empty()) return false;
  auto v = ctx.ConstantValue(name);
  if (!v.ok() || v->shape().size() != 1) return false;
  out->clear();
  for (uint64_t i = 0; i < v->num_elements(); ++i) out->push_back(int64_t(ElementAsDouble(*v, i)));
  return true;
}

bool IsElementwise(const std::string& op) {
  static const std::set<std::string> kOps = {
      "Add", "Sub", "Mul", "Div", "Where", "Concat", "Pow", "Equal",    "Less", "Greater",
      "And", "Or",  "Max", "Min", "Sum",   "Mean",   "Mod", "BitShift", "Xor",  "PRelu"};
  return kOps.count(op) > 0;
}

void CheckReshape(const LintContext& ctx, const NodeInfo& n, std::vector<LintFinding>* out) {
  std::vector<int64_t> shape;
  if (n.inputs.size() < 2 || !ConstShape(ctx, n.inputs[1], &shape) || shape.empty()) return;
  const ValueInfo* data = ctx.Type(n.inputs[0]);
  if (data == nullptr || !data->has_shape) return;
  bool any_dynamic = false, all_literal = true;
  for (const Dim& d : data->dims) any_dynamic |= Dynamic(d);
  bool allowzero = AttrInt(ctx.Proto(n), "allowzero", 0) != 0;
  for (int64_t v : shape) all_literal &= v > 0 || (v == 0 && allowzero);
  if (!any_dynamic) return;
  std::string message;
  if (!data->dims.empty() && Dynamic(data->dims[0]) && shape[0] > 0) {
    message = "Reshape " + NodeLabel(n) + " fixes dimension 0 to " + std::to_string(shape[0]) +
              " (constant shape " + ShapeText(shape) + " in '" + n.inputs[1] + "') but '" +
              n.inputs[0] + "' is " + ValueInfoTypeString(*data) + " with dimension 0 '" +
              DimName(data->dims[0]) + "' dynamic";
  } else if (all_literal) {
    message = "Reshape " + NodeLabel(n) + " has the all-constant shape " + ShapeText(shape) +
              " ('" + n.inputs[1] + "') but '" + n.inputs[0] + "' is " +
              ValueInfoTypeString(*data) + " with dynamic dimensions";
  } else {
    return;
  }
  LintFinding f = MakeFinding(LintSeverity::kWarning, &n);
  f.tensor = n.inputs[1];
  f.message = message;
  f.why = kWhy;
  f.fix = kFix;
  out->push_back(std::move(f));
}

void CheckExpand(const LintContext& ctx, const NodeInfo& n, std::vector<LintFinding>* out) {
  std::vector<int64_t> shape;
  if (n.inputs.size() < 2 || !ConstShape(ctx, n.inputs[1], &shape) || shape.empty()) return;
  const ValueInfo* data = ctx.Type(n.inputs[0]);
  size_t data_rank = data && data->has_shape ? data->dims.size() : 0;
  const size_t rank = std::max(shape.size(), data_rank);
  // the constant's value at output position j, or -1 when the shape does not reach it
  auto shape_at = [&](size_t j) -> int64_t {
    size_t off = rank - shape.size();
    return j >= off ? shape[j - off] : -1;
  };
  std::string message;
  for (size_t j = 0; j < rank && message.empty() && data_rank > 0; ++j) {
    size_t off = rank - data_rank;
    if (j < off) continue;
    const Dim& d = data->dims[j - off];
    if (Dynamic(d) && shape_at(j) > 1) {
      message = "Expand " + NodeLabel(n) + " fixes dimension " + std::to_string(j) + " to " +
                std::to_string(shape_at(j)) + " (constant shape " + ShapeText(shape) + ") but '" +
                n.inputs[0] + "' is " + ValueInfoTypeString(*data) + " with that dimension dynamic";
    }
  }
  const std::string& y = n.outputs.empty() ? std::string() : n.outputs[0];
  for (int c : ctx.Consumers(y)) {
    if (!message.empty()) break;
    const NodeInfo& consumer = ctx.nodes()[c];
    if (!IsElementwise(consumer.op_type)) continue;
    int64_t concat_axis = -1;
    if (consumer.op_type == "Concat") concat_axis = AttrInt(ctx.Proto(consumer), "axis", 0);
    for (const std::string& other : consumer.inputs) {
      if (other == y || other.empty() || !message.empty()) continue;
      const ValueInfo* t = ctx.Type(other);
      if (t == nullptr || !t->has_shape || t->dims.size() > rank) continue;
      size_t off = rank - t->dims.size();
      for (size_t j = off; j < rank; ++j) {
        int64_t axis = concat_axis < 0 ? concat_axis + int64_t(t->dims.size()) : concat_axis;
        if (consumer.op_type == "Concat" && int64_t(j - off) == axis) continue;
        const Dim& d = t->dims[j - off];
        if (Dynamic(d) && shape_at(j) > 1) {
          message = "Expand " + NodeLabel(n) + " fixes dimension " + std::to_string(j) + " to " +
                    std::to_string(shape_at(j)) + " (constant shape " + ShapeText(shape) +
                    "), and its output meets '" + other + "' (" + ValueInfoTypeString(*t) +
                    ", that dimension dynamic) at " + NodeLabel(consumer);
          break;
        }
      }
    }
  }
  if (message.empty()) return;
  LintFinding f = MakeFinding(LintSeverity::kWarning, &n);
  f.tensor = n.inputs[1];
  f.message = message;
  f.why = kWhy;
  f.fix = kFix;
  out->push_back(std::move(f));
}

}  // namespace

void CheckBakedShape(const LintContext& ctx, std::vector<LintFinding>* out) {
  if (!ctx.HasDynamicInput()) return;
  for (const NodeInfo& n : ctx.nodes()) {
    if (!(n.domain.empty() || n.domain == "ai.onnx")) continue;
    if (n.op_type == "Reshape") CheckReshape(ctx, n, out);
    if (n.op_type == "Expand") CheckExpand(ctx, n, out);
  }
}

}  // namespace onnxprobe::lint
