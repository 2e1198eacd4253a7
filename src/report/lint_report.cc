// Text and JSON renderings of a LintReport (schema "onnxprobe-lint", docs/lint.md).
#include "onnxprobe/report/lint_report.h"

#include "onnxprobe/common/json.h"
#include "onnxprobe/lint/lint.h"

namespace onnxprobe {
namespace {

constexpr int kLintSchemaVersion = 1;

std::string Plural(size_t n, const char* one, const char* many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string Where(const LintFinding& f) {
  if (f.node_index < 0) return f.tensor.empty() ? "model" : "tensor '" + f.tensor + "'";
  std::string name = f.node.empty() ? "(unnamed)" : f.node;
  return name + " (" + f.op_type + " #" + std::to_string(f.node_index) + ")";
}

}  // namespace

std::string RenderLintText(const LintReport& r) {
  std::string s = "lint " + r.model;
  if (!r.runtime_version.empty()) s += " for ONNX Runtime " + r.runtime_version;
  s += "\n";
  for (const LintFinding& f : r.findings) {
    s += "\n" + std::string(LintSeverityName(f.severity)) + " " + f.code + " " + f.rule + " at " +
         Where(f) + "\n";
    s += "  " + f.message + "\n";
    s += "  why: " + f.why + "\n";
    s += "  fix: " + f.fix + "\n";
  }
  for (const std::string& n : r.notes) s += "\nnote: " + n;
  if (!r.notes.empty()) s += "\n";
  s += "\n" + Plural(r.findings.size(), "finding", "findings") + ": " +
       Plural(r.Count(LintSeverity::kError), "error", "errors") + ", " +
       Plural(r.Count(LintSeverity::kWarning), "warning", "warnings") + ", " +
       std::to_string(r.Count(LintSeverity::kInfo)) + " info (" +
       Plural(r.rules_run.size(), "rule", "rules") + " run)\n";
  return s;
}

std::string RenderLintJson(const LintReport& r) {
  JsonWriter j;
  j.BeginObject();
  j.Key("schema").String("onnxprobe-lint").Key("schema_version").Int(kLintSchemaVersion);
  j.Key("model").String(r.model);
  j.Key("runtime_version");
  if (r.runtime_version.empty())
    j.Null();
  else
    j.String(r.runtime_version);
  j.Key("counts").BeginObject();
  for (LintSeverity s : {LintSeverity::kError, LintSeverity::kWarning, LintSeverity::kInfo})
    j.Key(LintSeverityName(s)).UInt(r.Count(s));
  j.EndObject();
  j.Key("rules_run").BeginArray();
  for (const std::string& c : r.rules_run) j.String(c);
  j.EndArray();
  j.Key("findings").BeginArray();
  for (const LintFinding& f : r.findings) {
    j.BeginObject();
    j.Key("code").String(f.code).Key("rule").String(f.rule);
    j.Key("severity").String(LintSeverityName(f.severity));
    j.Key("node");
    if (f.node_index < 0)
      j.Null();
    else
      j.String(f.node);
    j.Key("node_index").Int(f.node_index).Key("op_type").String(f.op_type);
    j.Key("tensor").String(f.tensor);
    j.Key("message").String(f.message).Key("why").String(f.why).Key("fix").String(f.fix);
    j.EndObject();
  }
  j.EndArray();
  j.Key("notes").BeginArray();
  for (const std::string& n : r.notes) j.String(n);
  j.EndArray();
  j.EndObject();
  return j.str() + "\n";
}

}  // namespace onnxprobe
