// OP013: ScatterND / ScatterElements (and the deprecated Scatter) with reduction "none" whose
// indices may repeat. ONNX leaves the result undefined when two updates hit one element:
// ONNX Runtime's CPU kernel lets the last write win, GPU kernels write in parallel and any of
// them may win, so outputs can differ run to run and provider to provider.
// Constant indices that do repeat are a warning (naming the element); indices computed at run
// time are info (they may repeat, nothing here can tell).
#include <map>

#include "lint/rules.h"

namespace onnxprobe::lint {
namespace {

constexpr uint64_t kMaxScan = uint64_t(1) << 24;

// Target element of every update, as index tuples; false when the indices are too large to scan.
bool Targets(const NodeInfo& n, const onnx::NodeProto& p, const Tensor& idx, const ValueInfo* data,
             std::vector<std::vector<int64_t>>* out) {
  if (idx.num_elements() > kMaxScan) return false;
  auto dim = [&](size_t axis) -> int64_t {
    if (data == nullptr || !data->has_shape || axis >= data->dims.size()) return -1;
    return data->dims[axis].value;
  };
  auto normalize = [&](int64_t v, size_t axis) {
    int64_t d = dim(axis);
    return v < 0 && d > 0 ? v + d : v;
  };
  const Shape& s = idx.shape();
  if (n.op_type == "ScatterND") {
    if (s.empty()) return false;
    const int64_t k = s.back();
    if (k <= 0) return true;
    for (uint64_t base = 0; base + k <= idx.num_elements(); base += k) {
      std::vector<int64_t> t(k);
      for (int64_t j = 0; j < k; ++j) t[j] = normalize(int64_t(ElementAsDouble(idx, base + j)), j);
      out->push_back(std::move(t));
    }
    return true;
  }
  int64_t axis = AttrInt(p, "axis", 0);
  if (axis < 0) axis += int64_t(s.size());
  if (axis < 0 || axis >= int64_t(s.size())) return false;
  std::vector<int64_t> pos(s.size(), 0);
  for (uint64_t i = 0; i < idx.num_elements(); ++i) {
    std::vector<int64_t> t = pos;
    t[axis] = normalize(int64_t(ElementAsDouble(idx, i)), size_t(axis));
    out->push_back(std::move(t));
    for (int64_t d = int64_t(s.size()) - 1; d >= 0; --d) {  // next row-major position
      if (++pos[d] < s[d]) break;
      pos[d] = 0;
    }
  }
  return true;
}

std::string TupleText(const std::vector<int64_t>& t) { return ShapeToString(t); }

}  // namespace

void CheckScatterIndices(const LintContext& ctx, std::vector<LintFinding>* out) {
  for (const NodeInfo& n : ctx.nodes()) {
    if (!(n.domain.empty() || n.domain == "ai.onnx")) continue;
    if (n.op_type != "ScatterND" && n.op_type != "ScatterElements" && n.op_type != "Scatter")
      continue;
    const onnx::NodeProto& p = ctx.Proto(n);
    if (AttrString(p, "reduction", "none") != "none" || n.inputs.size() < 2) continue;
    const std::string& indices = n.inputs[1];
    LintFinding f = MakeFinding(LintSeverity::kWarning, &n);
    f.tensor = indices;
    f.why =
        "with reduction='none' ONNX leaves repeated indices undefined: ONNX Runtime's CPU "
        "kernel keeps the last write, GPU kernels race, so the output depends on the provider "
        "and can change from run to run";
    f.fix =
        "make the indices unique (deduplicate before the scatter), or use reduction='add'/'max' "
        "when accumulation is what was meant (PyTorch: index_put_(accumulate=True), "
        "scatter_reduce)";
    auto v = ctx.ConstantValue(indices);
    if (!v.ok()) {
      if (v.status().code() != ErrorCode::kNotFound) continue;
      f.severity = LintSeverity::kInfo;
      f.message = n.op_type + " " + NodeLabel(n) + " writes at indices '" + indices +
                  "' computed at run time: if two are equal the result is order-dependent";
      out->push_back(std::move(f));
      continue;
    }
    std::vector<std::vector<int64_t>> targets;
    if (!Targets(n, p, *v, ctx.Type(n.inputs[0]), &targets)) continue;
    std::map<std::vector<int64_t>, size_t> seen;
    for (size_t i = 0; i < targets.size(); ++i) {
      auto [it, fresh] = seen.emplace(targets[i], i);
      if (fresh) continue;
      f.message = n.op_type + " " + NodeLabel(n) + ": constant indices '" + indices +
                  "' write element " + TupleText(targets[i]) + " twice (updates " +
                  std::to_string(it->second) + " and " + std::to_string(i) + ")";
      out->push_back(std::move(f));
      break;
    }
  }
}

}  // namespace onnxprobe::lint
