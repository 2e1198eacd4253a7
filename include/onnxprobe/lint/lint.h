// Static findings on a loaded model, one rule per file under src/lint/ (like clang-tidy checks):
// each finding has a code, a severity, the node (or tensor) it is about, why it matters and how
// to fix it. No protobuf type appears here.
#pragma once

#include <cstddef>
#include <set>
#include <string>
#include <vector>

#include "onnxprobe/common/status.h"
#include "onnxprobe/model/model.h"

namespace onnxprobe {

enum class LintSeverity { kInfo = 0, kWarning = 1, kError = 2 };

// "info", "warning", "error".
const char* LintSeverityName(LintSeverity s);
// The inverse of LintSeverityName; fails naming the accepted values.
Expected<LintSeverity> ParseLintSeverity(const std::string& s);

struct LintFinding {
  std::string code;  // "OP001"
  std::string rule;  // "dropout-training-mode"
  LintSeverity severity = LintSeverity::kWarning;
  std::string node;     // the node's name; "" for model-level findings or unnamed nodes
  int node_index = -1;  // topological index into Model::index().nodes(); -1 when none
  std::string op_type;
  std::string tensor;   // the tensor concerned, when one is
  std::string message;  // what was found, with the values that prove it
  std::string why;      // why it matters for the numbers or the deployment
  std::string fix;      // how to fix it
};

struct LintRuleInfo {
  std::string code;
  std::string name;
  LintSeverity severity;  // the most severe level the rule reports
  std::string summary;
};

// Every rule, in code order.
const std::vector<LintRuleInfo>& LintRules();

struct LintOptions {
  // Version of the ONNX Runtime the model will run on ("1.23.2"). "" skips the opset/IR check
  // (the report then says so in `notes`).
  std::string runtime_version;
  // Codes or rule names not to run.
  std::set<std::string> disabled;
};

struct LintReport {
  std::string model;
  std::string runtime_version;
  std::vector<std::string> rules_run;  // codes, in order
  // Most severe first, then by node order.
  std::vector<LintFinding> findings;
  // What the lint could not check and why (e.g. shape inference failed, runtime unknown).
  std::vector<std::string> notes;

  size_t CountAtLeast(LintSeverity s) const;
  size_t Count(LintSeverity s) const;
};

// Runs every enabled rule. Fails only when the model's bytes cannot be read again (weights) or
// `options` names an unknown rule; a rule that cannot decide adds a note instead of failing.
Expected<LintReport> Lint(const Model& model, const LintOptions& options);

}  // namespace onnxprobe
