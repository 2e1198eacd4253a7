// A comparison over several input samples, rendered for the terminal, as JSON and as JUnit.
#include "onnxprobe/report/sample_report.h"

#include <cstdio>

#include "common/file_util.h"
#include "onnxprobe/common/format.h"
#include "onnxprobe/common/json.h"
#include "report/report_json.h"

namespace onnxprobe {

std::string RenderAggregateTable(const std::vector<TensorAggregate>& tensors) {
  if (tensors.empty()) return "";
  std::string out = "tensors across samples (worst = largest error / allowed error):\n";
  char line[512];
  std::snprintf(line, sizeof line, "  %-28s %12s %12s %-16s %12s %12s %s\n", "tensor", "worst abs",
                "worst rel", "worst sample", "mean abs", "mean rel", "failed");
  out += line;
  for (const auto& t : tensors) {
    std::snprintf(line, sizeof line, "  %-28s %12s %12s %-16s %12s %12s %zu/%zu\n", t.name.c_str(),
                  FormatNumber(t.worst_max_abs).c_str(), FormatNumber(t.worst_max_rel).c_str(),
                  t.worst_sample.c_str(), FormatNumber(t.mean_max_abs).c_str(),
                  FormatNumber(t.mean_max_rel).c_str(), t.failures, t.samples);
    out += line;
  }
  return out;
}

std::string RenderSamplesConsole(const SamplesCompareReport& r) {
  std::string out;
  for (const auto& s : r.samples) {
    const ComparisonResult& c = s.report.comparison;
    size_t compared = 0;
    for (const auto& row : c.rows) compared += row.state != RowState::kNotCompared;
    out += "sample " + s.name + ": " + (s.report.passed() ? "PASS" : "FAIL") + " (" +
           std::to_string(compared) + " tensors compared, " + std::to_string(c.failures) +
           " failing, " + FormatNumber(s.seconds, 3) + " s)\n";
  }
  out += RenderAggregateTable(r.tensors);
  if (r.aborted) {
    out += "samples: ERROR (" + r.abort_status.message() + ")\n";
  } else {
    out += std::string("samples: ") + (r.passed() ? "PASS" : "FAIL") + " (" +
           std::to_string(r.failed_samples) + " of " + std::to_string(r.samples.size()) +
           " samples failed)\n";
  }
  return out;
}

void AggregatesJson(const std::vector<TensorAggregate>& tensors, JsonWriter& j) {
  j.Key("tensors").BeginArray();
  for (const auto& t : tensors) {
    j.BeginObject().Key("name").String(t.name).Key("samples").UInt(t.samples);
    j.Key("failures").UInt(t.failures).Key("worst_sample").String(t.worst_sample);
    j.Key("worst_max_abs").Number(t.worst_max_abs).Key("worst_max_rel").Number(t.worst_max_rel);
    j.Key("worst_tolerance_ratio").Number(t.worst_tolerance_ratio);
    j.Key("mean_max_abs").Number(t.mean_max_abs).Key("mean_max_rel").Number(t.mean_max_rel);
    j.EndObject();
  }
  j.EndArray();
}

std::string RenderSamplesJson(const SamplesCompareReport& r, ReportDetail detail) {
  JsonWriter j;
  j.BeginObject();
  j.Key("schema").String("onnxprobe-compare-samples").Key("schema_version").Int(1);
  j.Key("passed").Bool(r.passed()).Key("aborted").Bool(r.aborted);
  if (r.aborted) j.Key("error").String(r.abort_status.message());
  j.Key("failed_samples").UInt(r.failed_samples);
  if (r.shard.sharded()) {  // docs/shard.md: what `onnxprobe merge` joins by
    j.Key("shard").BeginObject().Key("index").UInt(r.shard.index).Key("count").UInt(r.shard.count);
    j.Key("total_samples").UInt(r.total_samples).Key("positions").BeginArray();
    for (size_t k : r.positions) j.UInt(k);
    j.EndArray().EndObject();
  }
  j.Key("samples").BeginArray();
  for (const auto& s : r.samples) {
    j.BeginObject().Key("name").String(s.name).Key("passed").Bool(s.report.passed());
    j.Key("seconds").Number(s.seconds).Key("report");
    WriteComparisonJson(s.report, j, detail);
    j.EndObject();
  }
  j.EndArray();
  AggregatesJson(r.tensors, j);
  j.EndObject();
  return j.str() + "\n";
}

Status WriteSamplesJson(const SamplesCompareReport& r, const std::string& path,
                        ReportDetail detail) {
  return WriteFileAtomic(path, RenderSamplesJson(r, detail));
}

std::vector<JUnitSuite> SamplesJUnit(const SamplesCompareReport& r, const std::string& classname) {
  std::vector<JUnitSuite> suites;
  for (const auto& s : r.samples) {
    JUnitSuite suite = JUnitSuiteFor(s.report, s.name, classname, s.name + "/", s.row_seconds);
    suite.seconds = s.seconds;
    suites.push_back(std::move(suite));
  }
  return suites;
}

}  // namespace onnxprobe
