// Console and JSON renderings of a generation comparison.
#include "onnxprobe/report/generate_report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "common/file_util.h"
#include "onnxprobe/common/format.h"
#include "onnxprobe/common/json.h"
#include "onnxprobe/common/version.h"
#include "report/report_json.h"

namespace onnxprobe {
namespace {

std::string Tokens(const std::vector<int64_t>& t, size_t limit = 64) {
  std::string s;
  for (size_t i = 0; i < t.size() && i < limit; ++i) s += (i ? " " : "") + std::to_string(t[i]);
  if (t.size() > limit) s += " ... (" + std::to_string(t.size()) + " in all)";
  return s;
}

std::string Pad(const std::string& s, size_t w) {
  return s.size() >= w ? s : s + std::string(w - s.size(), ' ');
}

std::string KindName(char k) { return k == 'k' ? "key" : k == 'v' ? "value" : "kv"; }

// The worst cache tensor of a step, by tolerance ratio.
const CacheRow* WorstCache(const GenerateStep& g) {
  const CacheRow* w = nullptr;
  for (const auto& c : g.cache) {
    if (w == nullptr || c.row.tolerance_ratio > w->row.tolerance_ratio) w = &c;
  }
  return w;
}

// Which steps the console table shows: all when few, else the start, the born step's
// neighbourhood and the end.
std::vector<bool> ShownSteps(const GenerateReport& r, size_t max_rows) {
  size_t n = r.steps.size();
  std::vector<bool> show(n, n <= max_rows);
  if (n <= max_rows) return show;
  for (size_t i = 0; i < std::min<size_t>(n, 8); ++i) show[i] = true;
  for (size_t i = n - std::min<size_t>(n, 3); i < n; ++i) show[i] = true;
  for (int s : {r.born_step, r.first_divergent_step}) {
    if (s < 1) continue;
    for (int d = -3; d <= 3; ++d) {
      int i = s - 1 + d;
      if (i >= 0 && i < static_cast<int>(n)) show[static_cast<size_t>(i)] = true;
    }
  }
  return show;
}

void IoJson(JsonWriter& j, const DecoderIo& io) {
  j.BeginObject();
  j.Key("input_ids").String(io.input_ids).Key("attention_mask").String(io.attention_mask);
  j.Key("position_ids").String(io.position_ids).Key("logits").String(io.logits);
  j.Key("layers").Int(io.layers).Key("cache").BeginArray();
  for (const auto& c : io.cache) {
    j.BeginObject().Key("past").String(c.past).Key("present").String(c.present);
    j.Key("layer").Int(c.layer).Key("kind").String(KindName(c.kind));
    j.Key("seq_axis").Int(c.seq_axis).EndObject();
  }
  j.EndArray().EndObject();
}

void NumberOrNull(JsonWriter& j, double v) {
  if (std::isfinite(v)) {
    j.Number(v);
  } else {
    j.Null();
  }
}

}  // namespace

std::string RenderGenerateConsole(const GenerateReport& r, const ConsoleOptions& o) {
  auto color = [&o](const char* code, const std::string& s) {
    return o.color ? std::string("\033[") + code + "m" + s + "\033[0m" : s;
  };
  std::string out;
  out += "onnxprobe generate: " + std::to_string(r.steps.size()) + " steps from a prompt of " +
         std::to_string(r.prompt.size()) + " tokens" +
         (r.prompt_generated ? " (seeded random, seed " + std::to_string(r.seed) + ")" : "") + "\n";
  out += "  A: " + r.describe_a + "\n  B: " + r.describe_b + "\n";
  out += "  cache: " + std::to_string(r.io_a.layers) + " layers, " +
         std::to_string(r.io_a.cache.size()) + " tensors; logits '" + r.io_a.logits + "'\n";
  for (const auto& n : r.notes) out += color("1;33", "note: ") + n + "\n";
  if (!o.quiet) {
    out += "\nfree-running (each side its own greedy tokens):\n";
    if (r.first_divergent_step < 0) {
      out += "  the tokens agree for all " + std::to_string(r.tokens_a.size()) + " steps\n";
    } else {
      const GenerateStep& g = r.steps[static_cast<size_t>(r.first_divergent_step - 1)];
      out += "  the tokens part at step " + std::to_string(r.first_divergent_step) + ": A " +
             std::to_string(g.token_a) + ", B " + std::to_string(g.token_b) + "\n";
      if (!r.divergence_note.empty()) out += "  " + r.divergence_note + "\n";
    }
    out += "  A: " + Tokens(r.tokens_a) + "\n  B: " + Tokens(r.tokens_b) + "\n";
    out += "\nteacher-forced (B fed A's tokens; each side its own cache):\n";
    out += "  " + Pad("step", 6) + Pad("logits max|a-b|", 17) + Pad("tol.ratio", 11) +
           Pad("KL", 11) + Pad("top-1", 7) + Pad("top-" + std::to_string(r.top_k), 9) +
           Pad("margin A", 10) + Pad("worst cache (ratio)", 26) + "verdict\n";
    std::vector<bool> show = ShownSteps(r, o.max_rows);
    bool gap = false;
    for (size_t i = 0; i < r.steps.size(); ++i) {
      if (!show[i]) {
        if (!gap) out += "  ...\n";
        gap = true;
        continue;
      }
      gap = false;
      const GenerateStep& g = r.steps[i];
      const CacheRow* w = WorstCache(g);
      std::string cache = w == nullptr ? "-"
                                       : "L" + std::to_string(w->layer) + " " + KindName(w->kind) +
                                             " (" + FormatNumber(w->row.tolerance_ratio) + ")";
      // k is at most the vocabulary (the logits' element count)
      int k = g.logits.metrics.count > 0
                  ? static_cast<int>(
                        std::min<uint64_t>(static_cast<uint64_t>(r.top_k), g.logits.metrics.count))
                  : r.top_k;
      int agree = static_cast<int>(std::lround(g.topk_agreement * k));
      out +=
          "  " + Pad(std::to_string(g.step), 6) + Pad(FormatNumber(g.logits.metrics.max_abs), 17) +
          Pad(FormatNumber(g.logits.tolerance_ratio), 11) + Pad(FormatNumber(g.kl_divergence), 11) +
          Pad(g.token_a == g.token_b ? "=" : "differ", 7) +
          Pad(std::to_string(agree) + "/" + std::to_string(k), 9) +
          Pad(FormatNumber(g.margin_a), 10) + Pad(cache, 26) +
          (g.pass ? color("32", "PASS") : color("1;31", "FAIL")) + "\n";
    }
  }
  out += "\n";
  auto layer_table = [&](const char* why) {
    if (r.layer_errors.empty()) return;
    out += "  error introduced per layer at step " + std::to_string(r.compared_step) + why +
           " (largest first):\n";
    for (const auto& e : r.layer_errors) {
      std::string size = r.quant_min_sqnr_db > 0 ? "SQNR " + FormatNumber(e.sqnr_db) + " dB"
                                                 : FormatNumber(e.worst_ratio) + "x tolerance";
      out += "    " + Pad(e.layer < 0 ? "outside layers" : "layer " + std::to_string(e.layer), 16) +
             Pad(size, 20) + Pad(std::to_string(e.introduced_rows) + " nodes", 10) + e.worst_node +
             " (" + e.worst_op + ")\n";
    }
  };
  if (r.passed()) {
    out += color("32", "verdict: PASS") + ", every step's logits and cache within " +
           (r.quant_min_sqnr_db > 0 ? "the quantization rule" : "tolerance") + "\n";
    layer_table(" (each quantized layer run alone)");
    return out;
  }
  out += color("1;31", "verdict: FAIL") + ": error born at step " + std::to_string(r.born_step) +
         ", " + r.born_where + "\n";
  if (r.localized) {
    const ComparisonResult& c = r.step_report.comparison;
    size_t failing = 0;
    for (const auto& row : c.rows) failing += row.pass ? 0 : 1;
    out += "  step " + std::to_string(r.born_step) +
           " compared tensor by tensor with side A's exact cache: " + std::to_string(failing) +
           " of " + std::to_string(c.rows.size()) + " tensors fail\n";
    if (!r.culprit_node.empty()) {
      out += "  node: " + color("1", r.culprit_node) + " (" + r.culprit_op + ")" +
             (r.culprit_layer >= 0 ? ", layer " + std::to_string(r.culprit_layer) : "") + "\n";
    }
    if (r.layer_errors.size() > 1) layer_table("");
    size_t shown = 0, isolated = 0;
    for (const auto& cu : r.step_report.localization.culprits) isolated += cu.isolated ? 1 : 0;
    for (const auto& cu : r.step_report.localization.culprits) {
      if (!cu.isolated) continue;
      if (++shown > 8) {
        out += "    ... " + std::to_string(isolated - 8) + " more nodes run alone (--json)\n";
        break;
      }
      out += "    " + cu.node + " (" + cu.op_type +
             ") run alone on side B's runtime with side A's "
             "inputs: " +
             (cu.introduced ? color("1;31", "INTRODUCED") : color("33", "inherited")) +
             ", max|a-b| " + FormatNumber(cu.metrics.max_abs) + "\n";
    }
  }
  return out;
}

std::string RenderGenerateJson(const GenerateReport& r) {
  JsonWriter j;
  j.BeginObject().Key("schema").String("onnxprobe-generate").Key("schema_version").Int(1);
  j.Key("onnxprobe_version").String(Version());
  j.Key("verdict").String(r.passed() ? "PASS" : "FAIL");
  j.Key("side_a").BeginObject().Key("model").String(r.model_a);
  j.Key("description").String(r.describe_a).Key("io");
  IoJson(j, r.io_a);
  j.EndObject();
  j.Key("side_b").BeginObject().Key("model").String(r.model_b);
  j.Key("description").String(r.describe_b).Key("io");
  IoJson(j, r.io_b);
  j.EndObject();
  j.Key("prompt").BeginObject().Key("tokens").IntArray(r.prompt);
  j.Key("generated").Bool(r.prompt_generated).Key("seed").UInt(r.seed);
  j.Key("pad_left").Int(r.pad_left).EndObject();
  j.Key("steps").Int(static_cast<int64_t>(r.steps.size())).Key("top_k").Int(r.top_k);
  j.Key("tolerance").BeginObject().Key("atol").Number(r.policy.global.atol);
  j.Key("rtol").Number(r.policy.global.rtol).Key("judge").String(JudgeByName(r.policy.judge));
  j.EndObject();
  j.Key("free_running").BeginObject().Key("tokens_a").IntArray(r.tokens_a);
  j.Key("tokens_b").IntArray(r.tokens_b).Key("first_divergent_step");
  if (r.first_divergent_step > 0) {
    j.Int(r.first_divergent_step);
  } else {
    j.Null();
  }
  j.Key("note").String(r.divergence_note).EndObject();
  j.Key("teacher_forced").BeginArray();
  for (const auto& g : r.steps) {
    j.BeginObject().Key("step").Int(g.step).Key("verdict").String(g.pass ? "PASS" : "FAIL");
    j.Key("token_a").Int(g.token_a).Key("token_b").Int(g.token_b);
    j.Key("kl_divergence");
    NumberOrNull(j, g.kl_divergence);
    j.Key("topk_agreement").Number(g.topk_agreement).Key("margin_a");
    NumberOrNull(j, g.margin_a);
    j.Key("first_failing_layer").Int(g.first_failing_layer);
    j.Key("logits");
    RowJson(j, g.logits, 0);
    j.Key("cache").BeginArray();
    for (const auto& c : g.cache) {
      j.BeginObject().Key("layer").Int(c.layer).Key("kind").String(KindName(c.kind));
      j.Key("tensor").String(c.row.name).Key("tensor_b").String(c.row.name_b);
      j.Key("verdict").String(c.row.pass ? "PASS" : "FAIL");
      j.Key("max_abs").Number(c.row.metrics.max_abs).Key("max_rel").Number(c.row.metrics.max_rel);
      j.Key("tolerance_ratio");
      NumberOrNull(j, c.row.tolerance_ratio);
      j.Key("reason").String(c.row.reason).Key("position_max_abs").BeginArray();
      for (double v : c.position_max_abs) NumberOrNull(j, v);
      j.EndArray().EndObject();
    }
    j.EndArray().EndObject();
  }
  j.EndArray();
  j.Key("born");
  if (r.born_step > 0) {
    j.BeginObject().Key("step").Int(r.born_step).Key("layer").Int(r.born_layer);
    j.Key("where").String(r.born_where).Key("node").String(r.culprit_node);
    j.Key("op_type").String(r.culprit_op).Key("node_layer").Int(r.culprit_layer);
    j.Key("localized").Bool(r.localized).EndObject();
  } else {
    j.Null();
  }
  j.Key("layer_errors").BeginArray();
  for (const auto& e : r.layer_errors) {
    j.BeginObject().Key("layer").Int(e.layer).Key("introduced_rows").UInt(e.introduced_rows);
    j.Key("worst_ratio");
    NumberOrNull(j, e.worst_ratio);
    j.Key("worst_node").String(e.worst_node).Key("worst_op").String(e.worst_op);
    if (r.quant_min_sqnr_db > 0) j.Key("sqnr_db").Number(e.sqnr_db);
    j.EndObject();
  }
  j.EndArray();
  j.Key("quant_min_sqnr_db").Number(r.quant_min_sqnr_db);
  j.Key("compared_step").Int(r.compared_step);
  if (r.compared_step > 0) {
    j.Key("step_report");
    WriteComparisonJson(r.step_report, j);
  }
  j.Key("notes").BeginArray();
  for (const auto& n : r.notes) j.String(n);
  j.EndArray();
  j.Key("seconds").Number(r.seconds);
  j.EndObject();
  return j.str() + "\n";
}

Status WriteGenerateJson(const GenerateReport& r, const std::string& path) {
  return WriteFileAtomic(path, RenderGenerateJson(r));
}

}  // namespace onnxprobe
