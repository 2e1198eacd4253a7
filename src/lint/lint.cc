// The rule table and the driver: every rule runs on one shared context.
#include "onnxprobe/lint/lint.h"

#include <algorithm>

#include "lint/rules.h"
#include "model/model_impl.h"

namespace onnxprobe {
namespace {

struct RuleEntry {
  LintRuleInfo info;
  lint::RuleFn fn;
};

using S = LintSeverity;

const std::vector<RuleEntry>& Table() {
  static const std::vector<RuleEntry> kRules = {
      {{"OP001", "dropout-training-mode", S::kError,
        "Dropout exported in training mode drops activations at random on every run"},
       lint::CheckDropoutTraining},
      {{"OP002", "batchnorm-training-mode", S::kError,
        "BatchNormalization exported in training mode normalizes with batch statistics"},
       lint::CheckBatchNormTraining},
      {{"OP003", "baked-shape", S::kWarning,
        "Reshape/Expand with a constant shape on a tensor with dynamic dimensions"},
       lint::CheckBakedShape},
      {{"OP004", "resize-coordinates", S::kWarning,
        "Resize settings that differ from the framework the model came from"},
       lint::CheckResizeCoordinates},
      {{"OP005", "fp16-hostile-constant", S::kWarning,
        "float constants that overflow to inf or underflow to 0 in float16"},
       lint::CheckFp16HostileConstants},
      {{"OP006", "duplicate-initializer", S::kInfo,
        "initializers with identical bytes under different names"},
       lint::CheckDuplicateInitializers},
      {{"OP007", "unused-initializer", S::kInfo, "initializers no node reads"},
       lint::CheckUnusedInitializers},
      {{"OP008", "unused-input", S::kWarning, "graph inputs no node reads"},
       lint::CheckUnusedInputs},
      {{"OP009", "dead-node", S::kWarning, "nodes whose outputs reach no graph output"},
       lint::CheckDeadNodes},
      {{"OP010", "runtime-too-old", S::kError,
        "opset or IR version newer than the ONNX Runtime in use supports"},
       lint::CheckRuntimeSupport},
      {{"OP011", "custom-domain", S::kWarning,
        "operators outside the ONNX domains (custom or runtime-specific)"},
       lint::CheckCustomDomains},
      {{"OP012", "node-names", S::kInfo, "unnamed or duplicated node names"}, lint::CheckNodeNames},
      {{"OP013", "scatter-repeated-indices", S::kWarning,
        "ScatterND/ScatterElements whose indices may repeat (order-dependent result)"},
       lint::CheckScatterIndices},
      {{"OP014", "layernorm-fp16", S::kWarning,
        "LayerNorm decomposed into elementary ops that run in float16"},
       lint::CheckLayerNormFp16},
  };
  return kRules;
}

}  // namespace

const char* LintSeverityName(LintSeverity s) {
  switch (s) {
    case LintSeverity::kInfo:
      return "info";
    case LintSeverity::kWarning:
      return "warning";
    case LintSeverity::kError:
      return "error";
  }
  return "?";
}

Expected<LintSeverity> ParseLintSeverity(const std::string& s) {
  for (LintSeverity v : {LintSeverity::kInfo, LintSeverity::kWarning, LintSeverity::kError}) {
    if (s == LintSeverityName(v)) return v;
  }
  return InvalidArgument("unknown severity '" + s + "' (expected info, warning or error)");
}

const std::vector<LintRuleInfo>& LintRules() {
  static const std::vector<LintRuleInfo> kInfos = [] {
    std::vector<LintRuleInfo> v;
    for (const auto& r : Table()) v.push_back(r.info);
    return v;
  }();
  return kInfos;
}

size_t LintReport::CountAtLeast(LintSeverity s) const {
  return std::count_if(findings.begin(), findings.end(),
                       [s](const LintFinding& f) { return f.severity >= s; });
}

size_t LintReport::Count(LintSeverity s) const {
  return std::count_if(findings.begin(), findings.end(),
                       [s](const LintFinding& f) { return f.severity == s; });
}

Expected<LintReport> Lint(const Model& model, const LintOptions& options) {
  for (const std::string& d : options.disabled) {
    bool known = std::any_of(Table().begin(), Table().end(), [&](const RuleEntry& r) {
      return r.info.code == d || r.info.name == d;
    });
    if (!known)
      return InvalidArgument("unknown lint rule '" + d + "' (codes " + Table().front().info.code +
                             " to " + Table().back().info.code + ")");
  }
  OP_RETURN_IF_ERROR(model.impl().RequireBytes());
  const onnx::ModelProto* full = model.impl().FullProto();
  if (full == nullptr) return Corrupt(model.path() + ": cannot re-read the model's weights");

  LintReport report;
  report.model = model.path();
  report.runtime_version = options.runtime_version;
  lint::LintContext ctx(model, *full, options);
  for (const RuleEntry& r : Table()) {
    if (options.disabled.count(r.info.code) || options.disabled.count(r.info.name)) continue;
    report.rules_run.push_back(r.info.code);
    std::vector<LintFinding> found;
    r.fn(ctx, &found);
    for (LintFinding& f : found) {
      f.code = r.info.code;
      f.rule = r.info.name;
      report.findings.push_back(std::move(f));
    }
  }
  std::stable_sort(report.findings.begin(), report.findings.end(),
                   [](const LintFinding& a, const LintFinding& b) {
                     if (a.severity != b.severity) return a.severity > b.severity;
                     return a.node_index < b.node_index;
                   });
  report.notes = ctx.TakeNotes();
  return report;
}

}  // namespace onnxprobe
