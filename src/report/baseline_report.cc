// A baseline check rendered for the terminal, as JSON and as JUnit suites.
#include "onnxprobe/report/baseline_report.h"

#include <cstdio>

#include "common/file_util.h"
#include "onnxprobe/common/format.h"
#include "onnxprobe/common/json.h"
#include "onnxprobe/common/version.h"
#include "onnxprobe/report/sample_report.h"
#include "report/report_json.h"

namespace onnxprobe {
namespace {

constexpr const char* kCheckSchema = "onnxprobe-baseline-check";
constexpr int kCheckSchemaVersion = 1;

std::string CulpritLine(const Culprit& c) {
  return c.node + " (" + c.op_type + ", output " + c.tensor +
         "): alone on the current runtime with the reference inputs, max_abs " +
         FormatNumber(c.metrics.max_abs, 4) + ", max_rel " + FormatNumber(c.metrics.max_rel, 4);
}

// Where a failing sample's error is born, in lines ("" when the sample passed).
std::string LocalizationText(const SampleCheck& s) {
  const SampleLocalization& l = s.localization;
  if (l.method == LocalizeMethod::kNotNeeded) return "";
  std::string t;
  bool localized = l.method == LocalizeMethod::kStoredTensors || l.method == LocalizeMethod::kRerun;
  if (!l.first_diverging.empty()) {
    t += std::string(localized ? "first diverging tensor: " : "first failing stored tensor: ") +
         l.first_diverging + " (node " + l.first_diverging_node + ")\n";
  }
  for (const auto& c : l.introducing) t += "introduced by: " + CulpritLine(c) + "\n";
  switch (l.method) {
    case LocalizeMethod::kStoredTensors:
      t += "localized from the intermediate tensors the baseline stored\n";
      break;
    case LocalizeMethod::kRerun:
      t += "localized by capturing every tensor of the baseline's model and runtime and of the "
           "current run on this sample's inputs\n";
      break;
    case LocalizeMethod::kUnavailable:
      t += "not localized\n";
      break;
    case LocalizeMethod::kSkipped:
      break;
    case LocalizeMethod::kNotNeeded:
      break;
  }
  if (!l.note.empty()) t += l.note + "\n";
  if (l.has_rerun && !l.rerun.model_diff.empty())
    t += "model changes: " + l.rerun.model_diff + "\n";
  return t;
}

std::string Indent(const std::string& text, const std::string& pad) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    out += pad + text.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out;
}

std::string ChangesText(const BaselineCheckReport& r) {
  std::string t;
  for (const auto& c : r.changes) {
    if (c.field == EnvField::kCpuFlags) {
      t += std::string(EnvFieldName(c.field)) + ": only in baseline [" + c.baseline +
           "], only now [" + c.current + "]\n";
    } else {
      t += std::string(EnvFieldName(c.field)) + ": " +
           (c.baseline.empty() ? "(none)" : c.baseline) + " -> " +
           (c.current.empty() ? "(none)" : c.current) + "\n";
    }
  }
  return t;
}

void CulpritJson(JsonWriter& j, const Culprit& c) {
  j.BeginObject().Key("node").String(c.node).Key("op_type").String(c.op_type);
  j.Key("tensor").String(c.tensor).Key("max_abs").Number(c.metrics.max_abs);
  j.Key("max_rel").Number(c.metrics.max_rel).EndObject();
}

}  // namespace

std::string RenderBaselineCheckConsole(const BaselineCheckReport& r) {
  const Baseline& b = r.baseline;
  const Environment& e = b.environment;
  std::string out = "baseline check: " + r.model_path + " against " + b.dir + " (" +
                    std::to_string(b.samples.size()) + " sample" +
                    (b.samples.size() == 1 ? "" : "s") + ", saved " + b.created +
                    " with onnxruntime " + e.runtime_version + " " + e.session.provider +
                    ", optimizations " + OptLevelName(e.session.optimization_level) + ")\n";
  std::string changes = ChangesText(r);
  out += changes.empty() ? "environment: unchanged\n"
                         : "environment changes:\n" + Indent(changes, "  ");
  for (const auto& s : r.samples) {
    const ComparisonResult& c = s.report.comparison;
    size_t compared = 0;
    for (const auto& row : c.rows) compared += row.state != RowState::kNotCompared;
    out += "sample " + s.name + ": " + (s.passed() ? "PASS" : "FAIL") + " (" +
           std::to_string(compared) + " tensors, " + FormatNumber(s.seconds, 3) + " s)\n";
    for (const auto& row : c.rows) {
      if (row.pass) continue;
      out += "  FAIL " + row.name + ": " + row.reason + "\n";
    }
    if (c.aborted) out += "  stopped: " + c.abort_status.message() + "\n";
    out += Indent(LocalizationText(s), "  ");
  }
  out += RenderAggregateTable(r.tensors);
  if (r.aborted) {
    out += "verdict: ERROR (" + r.abort_status.message() + ")\n";
  } else {
    out += std::string("verdict: ") + (r.passed() ? "PASS" : "FAIL") + " (" +
           std::to_string(r.failed_samples) + " of " + std::to_string(r.samples.size()) +
           " samples failed)\n";
  }
  return out;
}

std::string RenderBaselineCheckJson(const BaselineCheckReport& r) {
  JsonWriter j;
  j.BeginObject();
  j.Key("schema").String(kCheckSchema).Key("version").Int(kCheckSchemaVersion);
  j.Key("onnxprobe_version").String(Version());
  j.Key("model").String(r.model_path).Key("baseline").String(r.baseline.dir);
  j.Key("baseline_created").String(r.baseline.created);
  j.Key("passed").Bool(r.passed()).Key("aborted").Bool(r.aborted);
  if (r.aborted) j.Key("error").String(r.abort_status.message());
  j.Key("samples_checked").UInt(r.samples.size());
  j.Key("failed_samples").UInt(r.failed_samples).Key("seconds").Number(r.seconds);
  if (r.shard.sharded()) {
    j.Key("shard").BeginObject().Key("index").UInt(r.shard.index).Key("count").UInt(r.shard.count);
    j.Key("total_samples").UInt(r.baseline.samples.size());
    j.Key("positions").BeginArray();
    for (size_t p : r.positions) j.UInt(p);
    j.EndArray().Key("localize_samples").UInt(r.localize_samples).EndObject();
  }
  j.Key("environment_changes").BeginArray();
  for (const auto& c : r.changes) {
    j.BeginObject().Key("field").String(EnvFieldName(c.field));
    j.Key("baseline").String(c.baseline).Key("current").String(c.current).EndObject();
  }
  j.EndArray();
  j.Key("samples").BeginArray();
  for (const auto& s : r.samples) {
    const ComparisonResult& c = s.report.comparison;
    j.BeginObject().Key("name").String(s.name).Key("passed").Bool(s.passed());
    j.Key("seconds").Number(s.seconds).Key("failures").UInt(c.failures);
    j.Key("tensors").BeginArray();
    for (const auto& row : c.rows) {
      j.BeginObject().Key("name").String(row.name).Key("node").String(row.node);
      j.Key("state").String(RowStateName(row.state));
      j.Key("verdict").String(row.pass ? "PASS" : "FAIL").Key("reason").String(row.reason);
      j.Key("max_abs").Number(row.metrics.max_abs).Key("max_rel").Number(row.metrics.max_rel);
      j.Key("mismatches").UInt(row.metrics.mismatches).Key("count").UInt(row.metrics.count);
      j.Key("tolerance_ratio").Number(row.tolerance_ratio).EndObject();
    }
    j.EndArray();
    const SampleLocalization& l = s.localization;
    j.Key("localization").BeginObject().Key("method").String(LocalizeMethodName(l.method));
    j.Key("note").String(l.note).Key("first_diverging").String(l.first_diverging);
    j.Key("first_diverging_node").String(l.first_diverging_node);
    j.Key("introducing").BeginArray();
    for (const auto& x : l.introducing) CulpritJson(j, x);
    j.EndArray();
    if (l.has_rerun) j.Key("model_diff").String(l.rerun.model_diff);
    j.EndObject();
    j.EndObject();
  }
  j.EndArray();
  AggregatesJson(r.tensors, j);
  j.EndObject();
  return j.str() + "\n";
}

Status WriteBaselineCheckJson(const BaselineCheckReport& r, const std::string& path) {
  return WriteFileAtomic(path, RenderBaselineCheckJson(r));
}

std::vector<JUnitSuite> BaselineCheckJUnit(const BaselineCheckReport& r) {
  std::vector<JUnitSuite> suites;
  std::string changes = ChangesText(r);
  for (const auto& s : r.samples) {
    JUnitSuite suite =
        JUnitSuiteFor(s.report, s.name, r.model_path, s.name + "/", s.row_seconds, false);
    suite.seconds = s.seconds;  // the whole sample: opening both sides included
    const Environment& e = r.current;
    suite.properties = {{"onnxprobe_version", e.onnxprobe_version},
                        {"runtime_version", e.runtime_version},
                        {"runtime_library_sha256", e.runtime_library_sha256},
                        {"provider", e.session.provider},
                        {"optimization_level", OptLevelName(e.session.optimization_level)},
                        {"model_sha256", e.model_sha256},
                        {"baseline", r.baseline.dir},
                        {"baseline_created", r.baseline.created},
                        {"environment_changes", std::to_string(r.changes.size())}};
    std::string where = LocalizationText(s);
    for (auto& c : suite.cases) {
      if (c.outcome == JUnitOutcome::kFailure && !where.empty()) c.text += where;
    }
    suite.system_out =
        (changes.empty() ? "environment: unchanged\n" : "environment changes:\n" + changes) + where;
    suites.push_back(std::move(suite));
  }
  return suites;
}

const CompareReport* BaselineCheckFocus(const BaselineCheckReport& r) {
  for (const auto& s : r.samples) {
    if (s.passed()) continue;
    return s.localization.has_rerun ? &s.localization.rerun : &s.report;
  }
  const CompareReport* best = nullptr;
  double worst = -1;
  for (const auto& s : r.samples) {
    for (const auto& row : s.report.comparison.rows) {
      if (row.tolerance_ratio > worst) {
        worst = row.tolerance_ratio;
        best = &s.report;
      }
    }
  }
  if (best == nullptr && !r.samples.empty()) best = &r.samples.front().report;
  return best;
}

}  // namespace onnxprobe
