#include "report/quant_report.h"

#include <algorithm>
#include <cmath>

#include "onnxprobe/common/format.h"

namespace onnxprobe {
namespace {

std::string Db(double v) { return std::isnan(v) ? "-" : FormatNumber(v) + " dB"; }

// The worst channel of a per-channel figure: "channel 3 at 12.1 dB".
std::string WorstChannel(const std::vector<double>& ch) {
  if (ch.empty()) return "";
  size_t k = std::min_element(ch.begin(), ch.end()) - ch.begin();
  return "worst channel " + std::to_string(k) + " at " + Db(ch[k]);
}

void Channels(JsonWriter& j, const std::vector<double>& ch) {
  j.Key("channel_sqnr_db").BeginArray();
  for (double v : ch) j.Number(v);
  j.EndArray();
}

}  // namespace

std::string QuantConsoleSection(const QuantReport& q, size_t max_layers) {
  if (!q.active()) return "";
  std::string out = "quantized comparison (" + std::string(QuantFormatName(q.format)) +
                    "): " + std::to_string(q.paired) + " tensors paired by structure (" +
                    std::to_string(q.by_name_hint) + " also by the quantizer's names), " +
                    std::to_string(q.folded.size()) +
                    " folded into B's quantization; rule: a tensor passes at SQNR >= " +
                    FormatNumber(q.min_sqnr_db) + " dB (docs/quantization.md)\n";
  if (!q.weights.empty()) {
    auto worst = std::min_element(
        q.weights.begin(), q.weights.end(),
        [](const QuantWeight& a, const QuantWeight& b) { return a.sqnr_db < b.sqnr_db; });
    out += "weights: " + std::to_string(q.weights.size()) + " quantized; lowest SQNR " +
           worst->name_a + " (" + worst->node + ") " + Db(worst->sqnr_db) +
           (worst->per_channel ? ", per channel, " + WorstChannel(worst->channel_sqnr_db) : "") +
           "\n";
  }
  for (const auto& n : q.notes) out += "note: " + n + "\n";
  if (q.isolated && !q.layers.empty()) {
    out +=
        "quantized layers run alone on B (A's inputs quantized as B does), introduced error "
        "first (" +
        std::to_string(q.isolation_runs) + " runs):\n";
    size_t shown = 0;
    for (const QuantLayer& l : q.layers) {
      if (shown++ == max_layers) {
        out += "  ... " + std::to_string(q.layers.size() - max_layers) + " more (JSON/HTML)\n";
        break;
      }
      out += "  " + l.node_a + " (" + l.op_type + ") -> " + l.tensor_a + ": ";
      if (!l.isolated) {
        out += "not isolated: " + l.error + "\n";
        continue;
      }
      out += "SQNR " + Db(l.sqnr_db) + " alone, " + Db(l.accumulated_sqnr_db) + " in the model";
      if (l.max_steps > 0) out += ", max " + FormatNumber(l.max_steps) + " steps";
      if (l.saturated > 0) out += ", " + FormatNumber(100 * l.saturated) + "% saturated";
      if (l.below_limit) {
        if (!l.input_caused) {
          out += "; BELOW LIMIT";
        } else if (!std::isnan(l.float_input_sqnr_db)) {
          out += "; BELOW LIMIT from its inputs' quantization (" + Db(l.float_input_sqnr_db) +
                 " with float inputs)";
        } else {
          out += "; BELOW LIMIT from its input's quantization (" + l.input_tensor + " at " +
                 Db(l.input_sqnr_db) + ")";
        }
      }
      out += "\n";
    }
  }
  if (!q.exclude.empty()) {
    out += "exclusion list (onnxruntime.quantization nodes_to_exclude): [";
    for (size_t i = 0; i < q.exclude.size(); ++i) out += (i ? ", \"" : "\"") + q.exclude[i] + "\"";
    out += "]\n";
  } else if (q.isolated) {
    out += "exclusion list: empty (every quantized layer is within the limit alone)\n";
  }
  return out;
}

void QuantJson(JsonWriter& j, const QuantReport& q) {
  j.BeginObject();
  j.Key("format").String(QuantFormatName(q.format)).Key("min_sqnr_db").Number(q.min_sqnr_db);
  j.Key("paired").UInt(q.paired).Key("paired_by_name_hint").UInt(q.by_name_hint);
  j.Key("folded").BeginArray();
  for (const auto& n : q.folded) j.String(n);
  j.EndArray().Key("notes").BeginArray();
  for (const auto& n : q.notes) j.String(n);
  j.EndArray();
  j.Key("tensors").BeginArray();
  for (const QuantRowMetrics& r : q.rows) {
    j.BeginObject().Key("index").Int(r.row).Key("sqnr_db").Number(r.sqnr_db);
    j.Key("has_params").Bool(r.has_params);
    if (r.has_params) {
      j.Key("scale").Number(r.scale).Key("per_channel").Bool(r.per_channel);
      j.Key("max_steps").Number(r.max_steps).Key("mean_steps").Number(r.mean_steps);
      j.Key("saturated").Number(r.saturated);
    }
    Channels(j, r.channel_sqnr_db);
    j.EndObject();
  }
  j.EndArray().Key("weights").BeginArray();
  for (const QuantWeight& w : q.weights) {
    j.BeginObject().Key("name").String(w.name_a).Key("name_b").String(w.name_b);
    j.Key("node").String(w.node).Key("per_channel").Bool(w.per_channel).Key("axis").Int(w.axis);
    j.Key("sqnr_db").Number(w.sqnr_db).Key("max_steps").Number(w.max_steps);
    Channels(j, w.channel_sqnr_db);
    j.EndObject();
  }
  j.EndArray().Key("isolated").Bool(q.isolated).Key("isolation_runs").UInt(q.isolation_runs);
  j.Key("layers").BeginArray();
  for (const QuantLayer& l : q.layers) {
    j.BeginObject().Key("node").String(l.node_a).Key("op_type").String(l.op_type);
    j.Key("node_b").String(l.node_b).Key("tensor").String(l.tensor_a);
    j.Key("tensor_b").String(l.tensor_b).Key("isolated").Bool(l.isolated);
    j.Key("error").String(l.error).Key("nodes_b").BeginArray();
    for (const auto& n : l.nodes_b) j.String(n);
    j.EndArray();
    j.Key("sqnr_db").Number(l.sqnr_db).Key("accumulated_sqnr_db").Number(l.accumulated_sqnr_db);
    j.Key("max_steps").Number(l.max_steps).Key("saturated").Number(l.saturated);
    j.Key("input_sqnr_db").Number(l.input_sqnr_db).Key("input_tensor").String(l.input_tensor);
    j.Key("input_owner").String(l.input_owner);
    j.Key("float_input_sqnr_db").Number(l.float_input_sqnr_db);
    j.Key("below_limit").Bool(l.below_limit).Key("input_caused").Bool(l.input_caused);
    j.EndObject();
  }
  j.EndArray().Key("exclude").BeginArray();
  for (const auto& n : q.exclude) j.String(n);
  j.EndArray().EndObject();
}

}  // namespace onnxprobe
