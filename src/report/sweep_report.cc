// Renderings of a SweepReport: one line per shape, and JSON embedding each shape's report.
#include "onnxprobe/report/sweep_report.h"

#include <algorithm>
#include <cstdio>

#include "common/file_util.h"
#include "onnxprobe/common/format.h"
#include "onnxprobe/common/json.h"
#include "onnxprobe/pipeline/sweep.h"
#include "onnxprobe/report/report.h"

namespace onnxprobe {
namespace {

constexpr int kSweepSchemaVersion = 1;

enum class PointVerdict { kPass, kFail, kError };

PointVerdict VerdictOf(const SweepPoint& p) {
  if (!p.error.ok()) return PointVerdict::kError;
  const ComparisonResult& r = p.report.comparison;
  if (r.aborted && r.rows.empty()) return PointVerdict::kError;
  return p.report.passed() ? PointVerdict::kPass : PointVerdict::kFail;
}

const char* VerdictName(PointVerdict v) {
  switch (v) {
    case PointVerdict::kPass:
      return "PASS";
    case PointVerdict::kFail:
      return "FAIL";
    case PointVerdict::kError:
      return "ERROR";
  }
  return "?";
}

// The error that ended a point without rows, or "".
std::string ErrorOf(const SweepPoint& p) {
  if (!p.error.ok()) return p.error.message();
  const ComparisonResult& r = p.report.comparison;
  return r.aborted ? r.abort_status.message() : "";
}

size_t Compared(const ComparisonResult& r) {
  size_t n = 0;
  for (const auto& row : r.rows) n += row.state == RowState::kCompared;
  return n;
}

std::string Pad(const std::string& s, size_t w) {
  return s.size() >= w ? s : s + std::string(w - s.size(), ' ');
}

std::string AxesText(const SweepReport& r) {
  std::string s;
  for (const SweepAxis& a : r.axes) {
    std::string v;
    for (int64_t x : a.values) v += (v.empty() ? "" : ",") + std::to_string(x);
    s += (s.empty() ? "" : " x ") + a.dim + "=" + v;
  }
  return s;
}

}  // namespace

std::string RenderSweepText(const SweepReport& r) {
  std::string s = "sweep over " + AxesText(r) + ": " + std::to_string(r.points.size()) +
                  " shapes, " + std::to_string(r.failed_points) + " not passing\n";
  size_t w = 5;
  for (const auto& p : r.points) w = std::max(w, SweepPointLabel(p).size());
  s += "  " + Pad("shape", w) + "  " + Pad("verdict", 7) + "  " + Pad("failing", 9) + "  " +
       Pad("worst tensor (error / allowed)", 38) + "  first failure\n";
  for (const auto& p : r.points) {
    PointVerdict v = VerdictOf(p);
    s += "  " + Pad(SweepPointLabel(p), w) + "  " + Pad(VerdictName(v), 7) + "  ";
    if (v == PointVerdict::kError) {
      s += ErrorOf(p) + "\n";
      continue;
    }
    const ComparisonResult& c = p.report.comparison;
    s += Pad(std::to_string(c.failures) + "/" + std::to_string(Compared(c)), 9) + "  ";
    std::string worst = "-";
    if (p.worst_row >= 0) {
      const TensorResult& w_row = c.rows[p.worst_row];
      worst = w_row.name + " " + FormatNumber(w_row.tolerance_ratio);
    }
    s += Pad(worst, 38) + "  ";
    if (c.first_failure >= 0) {
      const TensorResult& f = c.rows[c.first_failure];
      s += f.name + " (" + f.op_type + " node " + f.node + ")";
    } else {
      s += "-";
    }
    s += "\n";
  }
  return s;
}

std::string RenderSweepJson(const SweepReport& r) {
  JsonWriter j;
  j.BeginObject().Key("schema").String("onnxprobe-sweep");
  j.Key("schema_version").Int(kSweepSchemaVersion).Key("passed").Bool(r.passed());
  j.Key("failed_points").UInt(r.failed_points);
  j.Key("axes").BeginArray();
  for (const SweepAxis& a : r.axes) {
    j.BeginObject().Key("dim").String(a.dim).Key("values").IntArray(a.values).EndObject();
  }
  j.EndArray().Key("points").BeginArray();
  auto json = MakeJsonReporter();
  for (const SweepPoint& p : r.points) {
    PointVerdict v = VerdictOf(p);
    j.BeginObject().Key("dims").BeginObject();
    for (const auto& [d, x] : p.dims) j.Key(d).Int(x);
    j.EndObject().Key("label").String(SweepPointLabel(p)).Key("verdict").String(VerdictName(v));
    if (v == PointVerdict::kError) {
      j.Key("error").String(ErrorOf(p));
    } else {
      j.Key("error").Null();
    }
    if (!p.error.ok()) {
      j.Key("report").Null().EndObject();
      continue;
    }
    const ComparisonResult& c = p.report.comparison;
    j.Key("failures").UInt(c.failures).Key("compared").UInt(Compared(c));
    j.Key("worst_tensor");
    if (p.worst_row >= 0) {
      const TensorResult& w = c.rows[p.worst_row];
      j.BeginObject().Key("name").String(w.name).Key("node").String(w.node);
      j.Key("op_type").String(w.op_type).Key("tolerance_ratio").Number(w.tolerance_ratio);
      j.Key("max_abs").Number(w.metrics.max_abs).Key("max_rel").Number(w.metrics.max_rel);
      j.Key("pass").Bool(w.pass).EndObject();
    } else {
      j.Null();
    }
    j.Key("first_failure");
    if (c.first_failure >= 0) {
      const TensorResult& f = c.rows[c.first_failure];
      j.BeginObject().Key("name").String(f.name).Key("node").String(f.node);
      j.Key("op_type").String(f.op_type).EndObject();
    } else {
      j.Null();
    }
    j.Key("report").Raw(json->Render(p.report)).EndObject();
  }
  j.EndArray().EndObject();
  return j.str() + "\n";
}

Status WriteSweepJson(const SweepReport& r, const std::string& path) {
  return WriteFileAtomic(path, RenderSweepJson(r));
}

}  // namespace onnxprobe
