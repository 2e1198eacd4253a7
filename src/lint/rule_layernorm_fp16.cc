// OP014: LayerNorm decomposed into ReduceMean -> Sub -> Pow(2) (or Mul(d, d)) -> ReduceMean ->
// Add(eps) -> Sqrt -> Div (or Reciprocal -> Mul), as exporters emit it below opset 17, when the
// pattern computes in float16: the input, the deviations or the squares are float16, or the
// epsilon / exponent constants are.
#include <functional>

#include "lint/rules.h"

namespace onnxprobe::lint {
namespace {

constexpr int kFloat16 = 10;  // TensorProto.FLOAT16

// The first consumer of `tensor` with `op` for which `ok` holds; -1 when none.
int Consumer(const LintContext& ctx, const std::string& tensor, const std::string& op,
             const std::function<bool(const NodeInfo&)>& ok) {
  if (tensor.empty()) return -1;
  for (int c : ctx.Consumers(tensor)) {
    const NodeInfo& n = ctx.nodes()[c];
    if (n.op_type == op && (n.domain.empty() || n.domain == "ai.onnx") && !n.outputs.empty() &&
        ok(n))
      return c;
  }
  return -1;
}

bool ConstEquals(const LintContext& ctx, const std::string& name, double want) {
  auto v = ctx.ConstantValue(name);
  return v.ok() && v->num_elements() == 1 && ElementAsDouble(*v, 0) == want;
}

bool IsFp16(const LintContext& ctx, const std::string& name) {
  const ValueInfo* t = ctx.Type(name);
  return t != nullptr && t->elem_type == kFloat16;
}

struct Match {
  std::vector<int> nodes;  // in pattern order
  std::string x, deviation, square, eps, exponent;
};

bool MatchFrom(const LintContext& ctx, const NodeInfo& mean1, Match* m) {
  const std::string& x = mean1.inputs.empty() ? std::string() : mean1.inputs[0];
  const std::string& mu = mean1.outputs[0];
  int sub = Consumer(ctx, mu, "Sub", [&](const NodeInfo& n) {
    return n.inputs.size() == 2 && n.inputs[0] == x && n.inputs[1] == mu;
  });
  if (sub < 0) return false;
  const std::string d = ctx.nodes()[sub].outputs[0];
  std::string exponent;
  int sq = Consumer(ctx, d, "Pow", [&](const NodeInfo& n) {
    return n.inputs.size() == 2 && n.inputs[0] == d && ConstEquals(ctx, n.inputs[1], 2.0);
  });
  if (sq >= 0) {
    exponent = ctx.nodes()[sq].inputs[1];
  } else {
    sq = Consumer(ctx, d, "Mul", [&](const NodeInfo& n) {
      return n.inputs.size() == 2 && n.inputs[0] == d && n.inputs[1] == d;
    });
  }
  if (sq < 0) return false;
  const std::string s = ctx.nodes()[sq].outputs[0];
  int mean2 = Consumer(ctx, s, "ReduceMean", [](const NodeInfo&) { return true; });
  if (mean2 < 0) return false;
  const std::string var = ctx.nodes()[mean2].outputs[0];
  std::string eps;
  int add = Consumer(ctx, var, "Add", [&](const NodeInfo& n) {
    if (n.inputs.size() != 2) return false;
    const std::string& other = n.inputs[0] == var ? n.inputs[1] : n.inputs[0];
    if (!ctx.IsConstant(other)) return false;
    eps = other;
    return true;
  });
  if (add < 0) return false;
  const std::string ve = ctx.nodes()[add].outputs[0];
  int sqrt = Consumer(ctx, ve, "Sqrt", [](const NodeInfo&) { return true; });
  if (sqrt < 0) return false;
  const std::string sd = ctx.nodes()[sqrt].outputs[0];
  std::vector<int> tail;
  int div = Consumer(ctx, sd, "Div", [&](const NodeInfo& n) {
    return n.inputs.size() == 2 && n.inputs[0] == d && n.inputs[1] == sd;
  });
  if (div >= 0) {
    tail = {div};
  } else {
    int rec = Consumer(ctx, sd, "Reciprocal", [](const NodeInfo&) { return true; });
    if (rec < 0) return false;
    const std::string r = ctx.nodes()[rec].outputs[0];
    int mul = Consumer(ctx, r, "Mul", [&](const NodeInfo& n) {
      return n.inputs.size() == 2 &&
             ((n.inputs[0] == d && n.inputs[1] == r) || (n.inputs[0] == r && n.inputs[1] == d));
    });
    if (mul < 0) return false;
    tail = {rec, mul};
  }
  m->nodes = {mean1.topo_index, sub, sq, mean2, add, sqrt};
  m->nodes.insert(m->nodes.end(), tail.begin(), tail.end());
  m->x = x;
  m->deviation = d;
  m->square = s;
  m->eps = eps;
  m->exponent = exponent;
  return true;
}

}  // namespace

void CheckLayerNormFp16(const LintContext& ctx, std::vector<LintFinding>* out) {
  for (const NodeInfo& n : ctx.nodes()) {
    if (n.op_type != "ReduceMean" || !(n.domain.empty() || n.domain == "ai.onnx") ||
        n.outputs.empty())
      continue;
    Match m;
    if (!MatchFrom(ctx, n, &m)) continue;
    std::string evidence;
    for (const std::string& t : {m.x, m.deviation, m.square, m.eps, m.exponent}) {
      if (!t.empty() && IsFp16(ctx, t)) {
        evidence = "'" + t + "' is float16";
        break;
      }
    }
    if (evidence.empty()) continue;
    const NodeInfo& square = ctx.nodes()[m.nodes[2]];
    std::string chain;
    for (int k : m.nodes) {
      if (!chain.empty()) chain += " -> ";
      chain += ctx.nodes()[k].op_type;
    }
    LintFinding f = MakeFinding(LintSeverity::kWarning, &square);
    f.tensor = m.square;
    f.message = "decomposed LayerNorm " + chain + " on '" + m.x + "' (from " + NodeLabel(n) +
                ") computes in float16: " + evidence;
    f.why =
        "squared deviations overflow float16 once |x - mean| > 255.9 (256^2 > 65504), making "
        "the variance inf and the output 0 or NaN, and the mean of squares loses precision in "
        "float16; ONNX Runtime's fused LayerNormalization kernels accumulate float16 inputs in "
        "float32";
    f.fix =
        "export at opset >= 17 so LayerNorm stays one LayerNormalization node, fuse it "
        "(onnxruntime.transformers optimizer), or keep these nodes in float32 (node_block_list "
        "of the fp16 converter)";
    out->push_back(std::move(f));
  }
}

}  // namespace onnxprobe::lint
