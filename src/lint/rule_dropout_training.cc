// OP001: Dropout exported in training mode. From opset 12 the mode is the third input
// (training_mode); before opset 7 it was the is_test attribute (default 0 = training).
#include "lint/rules.h"

namespace onnxprobe::lint {
namespace {

constexpr const char* kWhy =
    "in training mode Dropout zeroes a random fraction of the activations and scales the rest "
    "on every run, so outputs change from run to run and never match the framework's eval mode";
constexpr const char* kFix =
    "call model.eval() before torch.onnx.export (or export with "
    "training=torch.onnx.TrainingMode.EVAL); an inference model needs no Dropout at all";

// The dropout ratio when it is known, else -1.
double Ratio(const LintContext& ctx, const NodeInfo& n, const onnx::NodeProto& p) {
  if (ctx.Opset() < 12) return AttrFloat(p, "ratio", 0.5f);
  if (n.inputs.size() < 2 || n.inputs[1].empty()) return 0.5;
  auto v = ctx.ConstantValue(n.inputs[1]);
  if (!v.ok() || v->num_elements() != 1) return -1;
  return ElementAsDouble(*v, 0);
}

}  // namespace

void CheckDropoutTraining(const LintContext& ctx, std::vector<LintFinding>* out) {
  const int64_t opset = ctx.Opset();
  for (const NodeInfo& n : ctx.nodes()) {
    if (n.op_type != "Dropout" || !(n.domain.empty() || n.domain == "ai.onnx")) continue;
    const onnx::NodeProto& p = ctx.Proto(n);
    double ratio = Ratio(ctx, n, p);
    if (ratio == 0) continue;  // a zero ratio passes values through even in training mode
    std::string ratio_text = ratio < 0 ? "a run-time ratio" : "ratio " + Num(ratio);
    LintFinding f = MakeFinding(LintSeverity::kError, &n);
    f.why = kWhy;
    f.fix = kFix;
    if (opset > 0 && opset < 7) {
      if (AttrInt(p, "is_test", 0) != 0) continue;
      f.message = "Dropout " + NodeLabel(n) + " has is_test=0 (training mode) with " + ratio_text;
      out->push_back(std::move(f));
      continue;
    }
    if (opset < 12 || n.inputs.size() < 3 || n.inputs[2].empty()) continue;
    const std::string& mode = n.inputs[2];
    f.tensor = mode;
    auto v = ctx.ConstantValue(mode);
    if (v.ok()) {
      if (v->num_elements() != 1 || ElementAsDouble(*v, 0) == 0) continue;
      f.message = "Dropout " + NodeLabel(n) + " has training_mode '" + mode +
                  "' = true (constant) with " + ratio_text;
    } else {
      f.severity = LintSeverity::kWarning;
      f.message = "Dropout " + NodeLabel(n) + " takes training_mode from '" + mode +
                  "' at run time (" + ratio_text + "): any run that feeds true drops activations";
    }
    out->push_back(std::move(f));
  }
}

}  // namespace onnxprobe::lint
