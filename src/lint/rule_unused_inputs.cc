// OP008: graph inputs no node reads (reads inside If/Loop/Scan bodies count).
#include "lint/rules.h"

namespace onnxprobe::lint {

void CheckUnusedInputs(const LintContext& ctx, std::vector<LintFinding>* out) {
  for (const ValueInfo& v : ctx.model().summary().inputs) {
    if (ctx.IsRead(v.name) || ctx.IsGraphOutput(v.name)) continue;
    LintFinding f = MakeFinding(LintSeverity::kWarning, nullptr);
    f.tensor = v.name;
    f.message = "graph input '" + v.name + "' (" + ValueInfoTypeString(v) + ") is read by no node";
    f.why =
        "callers must still feed it, and its value changes nothing: typically an input the "
        "tracer found unused (an attention mask or a flag the Python code read only in a branch "
        "that was not taken), so the model ignores what the caller meant to control";
    f.fix =
        "check the model code path taken at export (masks, flags, optional inputs); remove the "
        "input if it is really unused";
    out->push_back(std::move(f));
  }
}

}  // namespace onnxprobe::lint
