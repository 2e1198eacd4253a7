// Text and JSON renderings of a DumpSummary (schema "onnxprobe-dump-inspect", docs/dump-format.md).
#include "onnxprobe/report/dump_summary_report.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "onnxprobe/backend/backend.h"
#include "onnxprobe/capture/dump_summary.h"
#include "onnxprobe/common/format.h"
#include "onnxprobe/common/json.h"

namespace onnxprobe {
namespace {

constexpr int kDumpInspectSchemaVersion = 1;

std::string Producer(const DumpTensorSummary& t) {
  if (t.is_input) return "graph input";
  if (!t.node.empty()) return t.op_type + " node '" + t.node + "'";
  if (!t.module.empty()) return "module '" + t.module + "'";
  return "";
}

std::string Stat(const TensorStats& s, double v) { return s.count == 0 ? "-" : FormatNumber(v); }

std::string Pad(const std::string& s, size_t w) {
  return s.size() >= w ? s : s + std::string(w - s.size(), ' ');
}

}  // namespace

std::string RenderDumpSummaryText(const DumpSummary& d) {
  const DumpMetadata& m = d.metadata;
  std::string s = "dump        " + d.path + " (" + DumpLayoutName(d.layout) + ", " +
                  std::to_string(d.tensors.size()) + " tensors, " + FormatBytes(d.total_bytes) +
                  ")\n";
  if (d.layout != DumpLayout::kPlainNpz) {
    if (!m.model_path.empty()) s += "model       " + m.model_path + "\n";
    if (!m.model_sha256.empty()) s += "sha256      " + m.model_sha256 + "\n";
    if (!m.runtime.empty()) {
      s += "runtime     " + m.runtime + ", " + m.provider + ", optimizations " +
           OptLevelName(m.optimization_level) + ", seed " + std::to_string(m.seed) + "\n";
    }
    if (!m.source.empty()) s += "source      " + m.source + "\n";
  }
  if (d.first_nonfinite >= 0) {
    const DumpTensorSummary& f = d.tensors[d.first_nonfinite];
    std::string where = Producer(f);
    s += "nonfinite   " + std::to_string(d.nonfinite_tensors) + " tensor" +
         (d.nonfinite_tensors == 1 ? "" : "s") + " hold NaN/Inf; the first: '" + f.name + "'" +
         (where.empty() ? "" : " (" + where + ")") + "\n";
  } else {
    s += "nonfinite   none\n";
  }
  size_t w = 6;
  for (const auto& t : d.tensors) w = std::max(w, t.name.size());
  w = std::min<size_t>(w, 48);
  s += "\n  " + Pad("kind", 6) + " " + Pad("topo", 5) + " " + Pad("tensor", w) + " " +
       Pad("dtype", 8) + " " + Pad("shape", 18) + " " + Pad("min", 10) + " " + Pad("max", 10) +
       " " + Pad("mean", 10) + " " + Pad("std", 10) + " " + Pad("nan", 6) + " " + Pad("inf", 6) +
       " producer\n";
  for (const auto& t : d.tensors) {
    const TensorStats& st = t.stats;
    s += "  " + Pad(t.is_input ? "input" : "tensor", 6) + " " +
         Pad(t.topo_index >= 0 ? std::to_string(t.topo_index) : "-", 5) + " " + Pad(t.name, w) +
         " " + Pad(DTypeName(t.dtype), 8) + " " + Pad(ShapeToString(t.shape), 18) + " " +
         Pad(Stat(st, st.min), 10) + " " + Pad(Stat(st, st.max), 10) + " " +
         Pad(Stat(st, st.mean), 10) + " " + Pad(Stat(st, st.std), 10) + " " +
         Pad(std::to_string(st.nan_count), 6) + " " + Pad(std::to_string(st.inf_count), 6) + " " +
         Producer(t) + "\n";
  }
  return s;
}

std::string RenderDumpSummaryJson(const DumpSummary& d) {
  const DumpMetadata& m = d.metadata;
  JsonWriter j;
  j.BeginObject().Key("schema").String("onnxprobe-dump-inspect");
  j.Key("schema_version").Int(kDumpInspectSchemaVersion);
  j.Key("path").String(d.path).Key("layout").String(DumpLayoutName(d.layout));
  j.Key("metadata");
  if (d.layout == DumpLayout::kPlainNpz) {
    j.Null();
  } else {
    j.BeginObject().Key("model").String(m.model_path).Key("model_sha256").String(m.model_sha256);
    j.Key("runtime").String(m.runtime).Key("runtime_version").String(m.runtime_version);
    j.Key("provider")
        .String(m.provider)
        .Key("optimization_level")
        .Int(OptLevelNumber(m.optimization_level));
    j.Key("seed").UInt(m.seed).Key("source").String(m.source).EndObject();
  }
  j.Key("tensor_count").UInt(d.tensors.size()).Key("total_bytes").UInt(d.total_bytes);
  j.Key("nonfinite_tensors").UInt(d.nonfinite_tensors).Key("first_nonfinite");
  if (d.first_nonfinite >= 0) {
    j.String(d.tensors[d.first_nonfinite].name);
  } else {
    j.Null();
  }
  j.Key("tensors").BeginArray();
  for (const auto& t : d.tensors) {
    j.BeginObject().Key("name").String(t.name).Key("kind").String(t.is_input ? "input" : "tensor");
    if (!t.node.empty()) j.Key("node").String(t.node).Key("op_type").String(t.op_type);
    if (t.topo_index >= 0) j.Key("topo_index").Int(t.topo_index);
    if (!t.module.empty()) j.Key("module").String(t.module);
    j.Key("dtype").String(DTypeName(t.dtype)).Key("shape").IntArray(t.shape);
    j.Key("bytes").UInt(t.bytes);
    const TensorStats& st = t.stats;
    j.Key("stats").BeginObject().Key("finite").UInt(st.count);
    for (auto [key, v] : {std::pair<const char*, double>{"min", st.min},
                          {"max", st.max},
                          {"mean", st.mean},
                          {"std", st.std}}) {
      j.Key(key);
      if (st.count == 0) {
        j.Null();
      } else {
        j.Number(v);
      }
    }
    j.Key("nan").UInt(st.nan_count).Key("inf").UInt(st.inf_count).EndObject();
    j.EndObject();
  }
  j.EndArray().EndObject();
  return j.str() + "\n";
}

}  // namespace onnxprobe
