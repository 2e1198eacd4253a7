// OP010: opset or IR version newer than the ONNX Runtime the model will run on (the runtime
// version comes from LintOptions; the CLI asks the loaded library). Limits: ort_support.cc.
#include "lint/ort_support.h"
#include "lint/rules.h"

namespace onnxprobe::lint {

void CheckRuntimeSupport(const LintContext& ctx, std::vector<LintFinding>* out) {
  const std::string& version = ctx.options().runtime_version;
  if (version.empty()) {
    ctx.Note("OP010: no ONNX Runtime version given; opset/IR support not checked");
    return;
  }
  OrtSupport s;
  if (!LookupOrtSupport(version, &s)) {
    ctx.Note("OP010: ONNX Runtime " + version + " is not in the support table (newest known " +
             NewestKnownOrt().release + "); opset/IR support not checked");
    return;
  }
  auto add = [&](const std::string& what, int64_t have, int64_t max) {
    LintFinding f = MakeFinding(LintSeverity::kError, nullptr);
    f.message = "the model's " + what + " is " + std::to_string(have) + "; ONNX Runtime " +
                version + " supports up to " + std::to_string(max);
    f.why =
        "this runtime refuses to load the model (\"opset is under development\" or "
        "\"Unsupported model IR version\"), or another runtime version gets used to make it load "
        "and its kernels give other numbers";
    f.fix =
        "export with an older opset (torch.onnx.export(opset_version=...), "
        "onnx.version_converter) and IR version, or run a newer ONNX Runtime";
    out->push_back(std::move(f));
  };
  const int64_t ir = ctx.proto().ir_version();
  if (ir > s.ir_version) add("IR version", ir, s.ir_version);
  for (const auto& o : ctx.proto().opset_import()) {
    if ((o.domain().empty() || o.domain() == "ai.onnx") && o.version() > s.onnx_opset)
      add("ai.onnx opset", o.version(), s.onnx_opset);
    if (o.domain() == "ai.onnx.ml" && s.ml_opset > 0 && o.version() > s.ml_opset)
      add("ai.onnx.ml opset", o.version(), s.ml_opset);
  }
}

}  // namespace onnxprobe::lint
