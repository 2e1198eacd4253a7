// OP007: initializers no node reads (reads inside If/Loop/Scan bodies count).
#include "lint/rules.h"

namespace onnxprobe::lint {

void CheckUnusedInitializers(const LintContext& ctx, std::vector<LintFinding>* out) {
  for (const auto& t : ctx.model().summary().initializers) {
    if (ctx.IsRead(t.name) || ctx.IsGraphOutput(t.name)) continue;
    LintFinding f = MakeFinding(LintSeverity::kInfo, nullptr);
    f.tensor = t.name;
    f.message = "initializer '" + t.name + "' (" + ShapeToString(t.dims) + ", " +
                std::to_string(t.num_bytes) + " bytes) is read by no node";
    f.why =
        "it is stored and loaded for nothing; when a weight the model should use is unused, the "
        "graph computes something else than the framework did (e.g. a branch dropped by tracing)";
    f.fix = "remove it (onnx-simplifier, onnx.helper), or check why the consuming path is missing";
    out->push_back(std::move(f));
  }
}

}  // namespace onnxprobe::lint
