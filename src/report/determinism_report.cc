// Text and JSON renderings of a determinism report (the CLI only prints them).
#include "onnxprobe/report/determinism_report.h"

#include <cmath>

#include "common/file_util.h"
#include "onnxprobe/capture/determinism.h"
#include "onnxprobe/common/format.h"
#include "onnxprobe/common/json.h"
#include "onnxprobe/report/report.h"

namespace onnxprobe {

std::string RenderDeterminismText(const DeterminismReport& r) {
  std::string out = r.model + " on " + r.runtime + ": " + std::to_string(r.runs) + " runs (";
  for (size_t i = 0; i < r.configurations.size(); ++i) out += (i ? "; " : "") + r.configurations[i];
  out += ")\n";
  size_t varied = 0, settings = 0;
  for (const auto& row : r.rows) {
    varied += row.run_max_abs > 0;
    settings += row.settings_max_abs > 0;
  }
  out += std::to_string(r.rows.size()) + " tensors: " + std::to_string(varied) +
         " differ between runs with the same settings, " + std::to_string(settings) +
         " differ under other thread/execution settings\n";
  if (r.first_nondeterministic >= 0) {
    const DeterminismRow& f = r.rows[r.first_nondeterministic];
    out += "first nondeterministic tensor: " + f.name + " (" + f.op_type + " node " + f.node +
           "), max abs difference " + FormatNumber(f.run_max_abs) + "\n";
  }
  if (r.first_settings_dependent >= 0) {
    const DeterminismRow& f = r.rows[r.first_settings_dependent];
    out += "first tensor that depends on settings: " + f.name + " (" + f.op_type + " node " +
           f.node + ") under " + f.settings_varying + ", max abs difference " +
           FormatNumber(f.settings_max_abs) + "\n";
  }
  out += r.outputs_reproducible ? "outputs: reproducible run to run\n"
                                : "outputs: NOT reproducible run to run\n";
  return out;
}

std::string RenderDeterminismJson(const DeterminismReport& r) {
  JsonWriter j;
  j.BeginObject().Key("schema").String("onnxprobe-determinism").Key("schema_version").Int(1);
  j.Key("model").String(r.model).Key("runtime").String(r.runtime).Key("runs").UInt(r.runs);
  j.Key("configurations").BeginArray();
  for (const auto& c : r.configurations) j.String(c);
  j.EndArray();
  j.Key("outputs_reproducible").Bool(r.outputs_reproducible);
  auto name_at = [&](int i) {
    if (i < 0)
      j.Null();
    else
      j.String(r.rows[i].name);
  };
  j.Key("first_nondeterministic");
  name_at(r.first_nondeterministic);
  j.Key("first_settings_dependent");
  name_at(r.first_settings_dependent);
  j.Key("tensors").BeginArray();
  for (const auto& row : r.rows) {
    j.BeginObject().Key("name").String(row.name).Key("node").String(row.node);
    j.Key("op_type").String(row.op_type).Key("run_max_abs").Number(row.run_max_abs);
    j.Key("settings_max_abs").Number(row.settings_max_abs);
    j.Key("settings_varying").String(row.settings_varying);
    j.Key("max_abs_value").Number(row.max_abs_value);
    j.Key("is_graph_output").Bool(row.is_graph_output).EndObject();
  }
  j.EndArray().EndObject();
  return j.str() + "\n";
}

Status WriteDeterminismJson(const DeterminismReport& report, const std::string& path) {
  return WriteFileAtomic(path, RenderDeterminismJson(report));
}

}  // namespace onnxprobe
