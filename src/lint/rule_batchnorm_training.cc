// OP002: BatchNormalization exported in training mode: training_mode=1 (opset 14+), the
// running-statistics outputs present (opsets 7-13 define them only for training), or is_test=0
// (before opset 7, where 0 is the default).
#include "lint/rules.h"

namespace onnxprobe::lint {
namespace {

constexpr const char* kWhy =
    "in training mode BatchNormalization normalizes each batch with that batch's own mean and "
    "variance instead of the learned running statistics: outputs depend on what else is in the "
    "batch, and several runtimes reject or ignore the mode";
constexpr const char* kFix =
    "call model.eval() before torch.onnx.export (or export with "
    "training=torch.onnx.TrainingMode.EVAL) so BatchNorm uses, or is folded with, its running "
    "statistics";

}  // namespace

void CheckBatchNormTraining(const LintContext& ctx, std::vector<LintFinding>* out) {
  const int64_t opset = ctx.Opset();
  for (const NodeInfo& n : ctx.nodes()) {
    if (n.op_type != "BatchNormalization" || !(n.domain.empty() || n.domain == "ai.onnx")) continue;
    const onnx::NodeProto& p = ctx.Proto(n);
    std::string extra;
    for (size_t i = 1; i < n.outputs.size(); ++i) {
      if (!n.outputs[i].empty()) extra += (extra.empty() ? "'" : ", '") + n.outputs[i] + "'";
    }
    std::string reason;
    if (opset > 0 && opset < 7 && AttrInt(p, "is_test", 0) == 0) {
      reason = "is_test=0 (training mode; the default before opset 7)";
    } else if (opset >= 14 && AttrInt(p, "training_mode", 0) != 0) {
      reason = "training_mode=1";
    } else if (!extra.empty() && opset >= 7) {
      reason = "training-mode outputs (running mean/variance: " + extra + ")";
    }
    if (reason.empty()) continue;
    LintFinding f = MakeFinding(LintSeverity::kError, &n);
    f.message = "BatchNormalization " + NodeLabel(n) + " has " + reason;
    f.why = kWhy;
    f.fix = kFix;
    out->push_back(std::move(f));
  }
}

}  // namespace onnxprobe::lint
