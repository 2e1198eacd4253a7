// Terminal table in topological order: rows around the first divergence, then a summary.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "onnxprobe/common/format.h"
#include "onnxprobe/report/report.h"
#include "report/quant_report.h"

namespace onnxprobe {
namespace {

std::string Safe(const std::string& s);

// With an exact reference: which side is closer to it, and each side's furthest row.
std::string ExactLine(const CompareReport& report) {
  if (!report.exact) return "";
  ExactCloseness c = SummarizeCloseness(report.comparison);
  if (c.rows == 0) return "exact reference: no row measured\n";
  return "closer to exact: A on " + std::to_string(c.closer_a) + " rows, B on " +
         std::to_string(c.closer_b) + ", equal on " + std::to_string(c.ties) +
         "; furthest from exact (relative to the row's scale): A " + FormatNumber(c.worst_a) +
         " at '" + Safe(c.worst_a_row) + "', B " + FormatNumber(c.worst_b) + " at '" +
         Safe(c.worst_b_row) + "'\n";
}

// A name from a model as one printable line: control characters (a newline, an escape code that
// would recolor or clear the terminal) are shown as \n, \r, \t or \xHH, never sent raw.
std::string Safe(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c < 0x20 || c == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", c);
      out += buf;
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

std::string Fmt(const char* f, double v) {
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (std::isnan(v)) return "nan";
  char buf[32];
  std::snprintf(buf, sizeof(buf), f, v);
  return buf;
}

std::string Clip(const std::string& s, size_t n) {
  if (s.size() <= n) return s;
  return "…" + s.substr(s.size() - (n - 1));
}

std::string Pad(const std::string& s, size_t n) {
  // "…" is one column but three bytes
  size_t cols = 0;
  for (unsigned char c : s) cols += (c & 0xc0) != 0x80;
  return cols >= n ? s : s + std::string(n - cols, ' ');
}

class ConsoleReporter : public Reporter {
 public:
  explicit ConsoleReporter(ConsoleOptions o) : o_(o) {}

  std::string Render(const CompareReport& report) const override {
    std::string out;
    // first: every value computed from such an input compares NaN with NaN
    for (const auto& n : report.nonfinite_inputs)
      out += Color("1;33", "warning: ") + Safe(n) + "\n";
    if (!o_.quiet && !report.comparison.rows.empty()) out += Table(report.comparison);
    if (!o_.quiet) out += AlignmentTable(report);
    out += Summary(report);
    return out;
  }

 private:
  std::string Color(const char* code, const std::string& s) const {
    return o_.color ? std::string("\033[") + code + "m" + s + "\033[0m" : s;
  }

  std::string Row(const TensorResult& t, size_t i) const {
    const TensorMetrics& m = t.metrics;
    std::string verdict =
        t.pass ? Color("32", "PASS") : Color(t.role == Role::kIntroduced ? "1;31" : "33", "FAIL");
    if (t.state == RowState::kAdvisory) verdict = Color("36", "ADV.");
    if (t.state == RowState::kNotCompared) verdict = "  - ";
    std::string role = t.pass ? "" : (t.role == Role::kIntroduced ? "introduced" : "inherited");
    if (t.state == RowState::kAdvisory) role = "by value";
    char line[512];
    std::snprintf(line, sizeof(line), "%5zu  %s  %s  %s  %-10s  %-10s  %9s  %9s  %9s  %7s  %8s\n",
                  i, Pad(Clip(Safe(t.name), 44), 44).c_str(),
                  Pad(Clip(Safe(t.op_type), 14), 14).c_str(), verdict.c_str(), role.c_str(),
                  t.state == RowState::kNotCompared ? "-" : GradeName(t.grade),
                  Fmt("%.2e", m.max_abs).c_str(), Fmt("%.2e", m.max_rel).c_str(),
                  Fmt("%.7g", m.cosine).c_str(), Fmt("%.3g", m.snr_db).c_str(),
                  Fmt("%.3g%%", 100 * m.mismatch_fraction).c_str());
    return line;
  }

  std::string Table(const ComparisonResult& r) const {
    std::string out;
    char head[256];
    std::snprintf(head, sizeof(head), "%5s  %s  %s  %s  %-10s  %-10s  %9s  %9s  %9s  %7s  %8s\n",
                  "#", Pad("tensor", 44).c_str(), Pad("op", 14).c_str(), "    ", "role", "grade",
                  "max abs", "max rel", "cosine", "snr dB", "mismatch");
    out += head;
    size_t n = r.rows.size();
    size_t begin = 0, end = n;
    if (n > o_.max_rows) {  // the window always holds the first divergence (or difference)
      int focus = r.first_failure >= 0 ? r.first_failure : std::max(0, r.first_difference);
      size_t center = static_cast<size_t>(focus);
      size_t before = std::min(o_.context, o_.max_rows / 2);
      begin = center > before ? center - before : 0;
      end = std::min(n, begin + o_.max_rows);
    }
    if (begin > 0) out += "  ... " + std::to_string(begin) + " rows before\n";
    for (size_t i = begin; i < end; ++i) out += Row(r.rows[i], i);
    if (end < n)
      out += "  ... " + std::to_string(n - end) + " more rows (see the JSON or HTML report)\n";
    return out + "\n";
  }

  static std::string Runs(int runs) {
    return runs == 1 ? "1 run" : "median of " + std::to_string(runs) + " runs";
  }

  // "latency: A 1.2 ms, B 0.8 ms (median of 3 runs); peak memory: A +12.5 MiB, B +9 MiB"; each
  // side's count of runs when they differ (slow runs stop early: CompareRequest::latency_max_ms)
  static std::string Resources(const CompareReport& report) {
    const SideResources* sides[] = {&report.resources_a, &report.resources_b};
    std::string lat, mem;
    std::vector<int> runs;
    for (const SideResources* s : sides) {
      if (s->measured) runs.push_back(s->latency.runs);
    }
    bool same = runs.empty() || std::count(runs.begin(), runs.end(), runs[0]) == int(runs.size());
    for (int i = 0; i < 2; ++i) {
      if (!sides[i]->measured) continue;
      const char* name = i == 0 ? "A " : "B ";
      lat += std::string(lat.empty() ? "" : ", ") + name + FormatMs(sides[i]->latency.median_ms);
      if (!same) lat += " (" + Runs(sides[i]->latency.runs) + ")";
      if (sides[i]->memory.measured) {
        mem += std::string(mem.empty() ? "" : ", ") + name + "+" +
               FormatBytes(sides[i]->memory.delta());
      }
    }
    if (lat.empty()) return "";
    std::string out = "latency: " + lat + (same ? " (" + Runs(runs[0]) + ")" : "");
    if (!mem.empty()) out += "; peak memory over the process before: " + mem;
    return out + "\n";
  }

  std::string Summary(const CompareReport& report) const {
    const ComparisonResult& r = report.comparison;
    std::string out;
    out += "A (reference): " + r.describe_a + "\n";
    out += "B (under test): " + r.describe_b + "\n";
    out += StringPrintf(
        "compared %zu tensors: %zu passed, %zu failed; %zu only in A, %zu only in B; ",
        r.rows.size(), r.rows.size() - r.failures, r.failures, r.only_a.size(), r.only_b.size());
    if (report.quant.active()) {  // the tolerance does not judge these rows: say what does
      out += "judged by SQNR >= " + FormatNumber(report.quant.min_sqnr_db) + " dB\n";
    } else {
      out += StringPrintf("atol %g%s rtol %g (%s)\n", r.policy.global.atol,
                          r.policy.global.scale_atol ? " x scale" : "", r.policy.global.rtol,
                          JudgeByName(r.policy.judge));
    }
    if (r.bisected) {
      out += "bisection: " + std::to_string(r.bisect_rounds) + " rounds (" +
             std::to_string(r.runs_a) + " runs on A, " + std::to_string(r.runs_b) + " on B), " +
             std::to_string(r.rows.size()) + " tensors probed\n";
    }
    if (!r.hidden_b.empty()) {
      out += std::to_string(r.hidden_b.size()) +
             " tensors of A are not captured on B and not compared: fused away in B's optimized "
             "graph, values fixed by the model alone on a provider other than CPU (capturing "
             "them would change what B runs), or tensors whose capture breaks B's compilation\n";
    }
    for (const auto& note : report.notes) out += "note: " + Safe(note) + "\n";
    out += Resources(report);
    if (!report.model_diff.empty()) out += "model diff: " + report.model_diff + "\n";
    out += ExactLine(report);
    // bounded: one line per kind of rewrite with its first instance (every one: JSON)
    for (const auto& [kind, n] : report.rewrite_kinds) {
      const std::string into = " folded into B's " + kind.substr(kind.rfind(' ') + 1) + " ";
      auto first = std::find_if(report.rewrites.begin(), report.rewrites.end(),
                                [&](const std::string& w) { return w.find(into) != w.npos; });
      out += "rewrite recognized: " + std::to_string(n) + " x " + Safe(kind) +
             (first == report.rewrites.end() ? "" : ", e.g. " + Safe(first->substr(0, 240))) + "\n";
    }
    out += QuantConsoleSection(report.quant, 10);
    if (report.parity.ran) {
      out += "parameter parity: " + std::to_string(report.parity.by_name) + " of " +
             std::to_string(report.parity.parameters) + " PyTorch parameters checked by name, " +
             std::to_string(report.parity.renamed) + " renamed initializers, " +
             std::to_string(report.parity.folded) + " convolutions with a BatchNorm folded in, " +
             std::to_string(report.parity.findings.size()) + " differ\n";
      for (const auto& f : report.parity.findings) out += "  " + Safe(f.message) + "\n";
    }
    out += Leading(r, report.quant.active()) + DriftLine(report) + Optimizations(report);
    if (!report.alignment.empty()) {
      std::map<std::string, int> by;
      for (const auto& a : report.alignment) ++by[AlignMethodName(a.method)];
      std::string parts;
      for (const auto& [m, n] : by)
        parts += (parts.empty() ? "" : ", ") + std::to_string(n) + " " + m;
      out += "alignment of " + std::to_string(report.alignment.size()) +
             " PyTorch activations: " + parts +
             " (none: no ONNX counterpart, e.g. fused or no nodes; see the JSON/HTML table)\n";
      // a short summary: the first few names of each kind, the reports list them all
      std::vector<std::string> by_value, unaligned;
      for (const auto& a : report.alignment) {
        if (a.method == AlignMethod::kValue) by_value.push_back(Safe(a.torch_name));
        if (a.method == AlignMethod::kNone && !a.inside) unaligned.push_back(Safe(a.torch_name));
      }
      auto few = [](const std::vector<std::string>& names) {
        constexpr size_t kShown = 4;
        std::string s;
        for (size_t i = 0; i < names.size() && i < kShown; ++i) s += (i ? ", " : "") + names[i];
        if (names.size() > kShown) s += " and " + std::to_string(names.size() - kShown) + " more";
        return s;
      };
      if (!by_value.empty())
        out +=
            "  paired by value alone (advisory: never a failure or a culprit): " + few(by_value) +
            "\n";
      if (!unaligned.empty())
        out += "  unaligned (module outputs and arguments): " + few(unaligned) + "\n";
    }
    if (r.aborted) {
      // the error itself is the caller's to print, once
      out += Color("1;31", "ABORTED") + (r.rows.empty()
                                             ? std::string(" before any tensor was compared\n")
                                             : " after " + std::to_string(r.rows.size()) +
                                                   " compared tensors (the rows above)\n");
    }
    for (const auto& u : r.unpaired_outputs) out += "unpaired graph output: " + Safe(u) + "\n";
    for (const auto& u : r.nan_outputs) out += "not compared: " + Safe(u) + "\n";
    if (r.first_failure < 0 && !r.unpaired_outputs.empty() && !r.aborted) {
      return out + Color("1;31", "verdict: FAIL") + ", " +
             std::to_string(r.unpaired_outputs.size()) +
             " graph output(s) without a counterpart on the other side; no compared tensor beyond "
             "tolerance\n";
    }
    if (r.first_failure < 0 && !r.nan_outputs.empty() && !r.aborted) {
      return out + Color("1;31", "verdict: FAIL") + ", " + std::to_string(r.nan_outputs.size()) +
             " graph output(s) hold only NaN on both sides (NaN in the inputs reach every value): "
             "nothing of them was compared\n";
    }
    if (r.first_failure < 0) {
      if (!r.aborted) out += Color("32", "verdict: PASS") + ", no tensor beyond tolerance\n";
      return out;
    }
    const TensorResult& f = r.rows[r.first_failure];
    out += Color("1;31", "verdict: FAIL") + "\n";
    out += "first divergence: " + Safe(f.name) + " (" + Safe(f.op_type) + " node " + Safe(f.node) +
           "): " + Safe(f.reason) + "\n";
    if (const std::string q = QuantIntroduced(report.quant); !q.empty()) {
      // one page, one answer: the quantized layers run alone decide, as the table above says
      return out + q + Culprits(report.localization) + Why(report.diagnosis);
    }
    if (r.frontier.empty()) {
      out += "where the error is born: " + Safe(report.origin_note) + "\n";
    } else {
      out += std::string("error introduced at") +
             (r.frontier_from_graph ? "" : " (no graph: first failure only)") + ":\n";
    }
    size_t shown = 0;
    for (int i : r.frontier) {
      if (shown++ == 10) {
        out += "  ... " + std::to_string(r.frontier.size() - 10) + " more\n";
        break;
      }
      const TensorResult& t = r.rows[i];
      out += "  " + Safe(t.node) + " (" + Safe(t.op_type) + ") -> " + Safe(t.name) + ": max rel " +
             Fmt("%.2e", t.metrics.max_rel) + ", " + GradeName(t.grade) + ChannelNote(t) + "\n";
    }
    size_t inherited = 0;
    for (const auto& t : r.rows) inherited += !t.pass && t.role == Role::kInherited;
    if (inherited) out += std::to_string(inherited) + " failing tensors only inherit that error\n";
    out += Culprits(report.localization);
    out += Why(report.diagnosis);
    return out;
  }

  // Diagnosis: per culprit, the cause, the experiment that shows it and the fix.
  std::string Why(const DiagnosisResult& d) const {
    if (!d.ran || (d.findings.empty() && d.unexplained.empty())) {
      return d.ran && !d.note.empty() ? "why: " + Safe(d.note) + "\n" : "";
    }
    std::string out = "why (experiments on the nodes alone; " + std::to_string(d.runs) + " runs, " +
                      Fmt("%.2f", d.seconds) + " s):\n";
    for (const Finding& f : d.findings) {
      out += "  " + Safe(f.node) + " (" + Safe(f.op_type) + ")" +
             (f.copies == 2 ? std::string(" and its copy in one more iteration")
              : f.copies > 2
                  ? " and its copies in " + std::to_string(f.copies - 1) + " more iterations"
                  : "") +
             ": " + Color("1", std::string(CauseName(f.cause))) + ", " +
             CertaintyName(f.certainty) + ": " + Safe(f.summary) + "\n";
      out += "    evidence: " + Safe(f.evidence) + "\n";
      out += "    fix: " + Safe(f.fix.summary) + "\n";
      if (!f.fix.command.empty()) out += "      run: " + Safe(f.fix.command) + "\n";
      if (!f.fix.side_b.empty())
        out += "      then compare with side B: " + Safe(f.fix.side_b) + "\n";
      if (!f.fix.compare_flags.empty())
        out += "      compare with: " + Safe(ShellJoin(f.fix.compare_flags)) + "\n";
      if (!f.fix.keep_float_nodes.empty())
        out += "      nodes to keep in float: " + Safe(ShellJoin(f.fix.keep_float_nodes)) + "\n";
      if (!f.seen_before.empty()) out += "    " + Safe(f.seen_before) + "\n";
    }
    for (const Unexplained& u : d.unexplained) {
      out += "  " + Safe(u.node) + " (" + Safe(u.op_type) + "): no known cause confirmed (" +
             Safe(u.tried) + ")\n";
    }
    if (!d.knowledge_file.empty()) out += "recorded in " + Safe(d.knowledge_file) + "\n";
    return out;
  }

  // What a reader needs first, PASS or FAIL: where the sides stop being bit-exact, the tensors
  // nearest their tolerance, and what a high-risk grade on a passing row means.
  // With quantized layers isolated, the layers below the SQNR limit alone (not from their inputs'
  // quantization) are where the error is introduced; the rest inherit it. "" when not isolated.
  static std::string QuantIntroduced(const QuantReport& q) {
    if (!q.active() || !q.isolated || q.layers.empty()) return "";
    std::string out, inherit;
    for (const QuantLayer& l : q.layers) {
      if (!l.isolated || !l.below_limit) continue;
      if (l.input_caused) {
        inherit += (inherit.empty() ? "" : ", ") + Safe(l.node_a);
        continue;
      }
      out += "  " + Safe(l.node_a) + " (" + Safe(l.op_type) + ") -> " + Safe(l.tensor_a) +
             ": SQNR " + Fmt("%.1f", l.sqnr_db) + " dB alone\n";
    }
    if (out.empty()) out = "  no quantized layer is below the limit alone\n";
    out = "error introduced at (quantized layers run alone, as in the table above):\n" + out;
    if (!inherit.empty())
      out += "below the limit only from their inputs' quantization: " + inherit + "\n";
    return out;
  }

  std::string Leading(const ComparisonResult& r, bool quantized) const {
    std::string out;
    if (r.first_difference < 0) {
      if (!r.rows.empty()) out += "bit-exact: every compared tensor is identical on both sides\n";
    } else {
      const TensorResult& d = r.rows[r.first_difference];
      out += "first difference: " + Safe(d.name) + " (" + Safe(d.op_type) + " node " +
             Safe(d.node) + "), max abs " + FormatNumber(d.metrics.max_abs) +
             (r.first_difference == 0
                  ? std::string("; the first compared tensor\n")
                  : "; bit-exact before it (" + std::to_string(r.first_difference) + " tensors)\n");
    }
    if (r.side_a.platform != r.side_b.platform && !r.rows.empty()) {
      // two CPUs: which kernels agree to the bit, by op type
      out += "bit-exact across the platforms, by op type:";
      for (const auto& e : BitExactByOp(r))
        out += " " + Safe(e.op_type) + " " + std::to_string(e.bit_exact) + "/" +
               std::to_string(e.compared) + ",";
      out.back() = '\n';
    }
    std::vector<int> closest = ClosestToTolerance(r, 3);
    if (!closest.empty() && r.rows[closest[0]].tolerance_ratio > 0) {
      // on a FAIL the first rows are past their tolerance, not close to it
      out += r.rows[closest[0]].tolerance_ratio > 1 ? "largest error / allowed:"
                                                    : "closest to tolerance (error / allowed):";
      for (int i : closest) {
        if (r.rows[i].tolerance_ratio <= 0) break;
        out += " " + Safe(r.rows[i].name) + " " + FormatNumber(r.rows[i].tolerance_ratio) + ";";
      }
      out.back() = '\n';
    }
    size_t risky = 0;
    for (const auto& t : r.rows)
      risky += t.pass && t.state == RowState::kCompared && t.grade == Grade::kHighRisk;
    if (risky > 0 && !quantized) {  // quantized rows are judged by SQNR, not atol/rtol
      out += std::to_string(risky) +
             (risky == 1 ? " passing tensor grades" : " passing tensors grade") +
             " high-risk: a grade rates the largest relative error alone "
             "(>= 1e-3, often where values are near 0); the verdict applies atol + rtol*|a| "
             "(docs/metrics.md, grades and verdicts)\n";
    }
    return out;
  }

  std::string Optimizations(const CompareReport& report) const {
    if (!report.optimizations_explained) return "";
    const ExplainResult& e = report.optimizations;
    std::string out = "optimization ladder (graph outputs vs optimizations disabled):";
    for (const auto& st : e.ladder) {
      out += " " + OptLevelName(st.level) + " " +
             (st.differing_outputs == 0
                  ? std::string("bit-exact")
                  : "max abs " + FormatNumber(st.max_abs) + (st.within_tolerance ? "" : " FAIL")) +
             ";";
    }
    out.back() = '\n';
    if (!e.first_level_with_difference) return out;
    std::string names;
    for (const auto& n : e.responsible) names += (names.empty() ? "" : ", ") + n;
    out += "transformers that change the outputs: " + (names.empty() ? "none found" : names) +
           (e.explained_by_transformers
                ? ""
                : " (disabling every known transformer does not make the outputs bit-exact: "
                  "part of the difference comes from elsewhere)") +
           "; " + std::to_string(e.runs) + " runs\n";
    return out;
  }

  // "differences are born at 3 nodes (Conv 2, Add 1): ..." under PASS and FAIL alike
  std::string DriftLine(const CompareReport& report) const {
    const LocalizeResult& l = report.localization;
    if (l.drift_origins.empty()) return "";
    std::map<std::string, int> by_op;
    for (const auto& c : l.drift_origins) ++by_op[c.op_type];
    std::string ops;
    for (const auto& [op, n] : by_op)
      ops += (ops.empty() ? "" : ", ") + op + " " + std::to_string(n);
    std::string out = "differences are born at " + std::to_string(l.drift_origins.size()) +
                      " node" + (l.drift_origins.size() == 1 ? "" : "s") + " (" + ops + ")" +
                      (report.comparison.failures == 0 ? "; all within tolerance" : "") +
                      (l.drift_unexamined ? "; " + std::to_string(l.drift_unexamined) +
                                                " differing tensors not examined"
                                          : "") +
                      ":\n";
    size_t shown = 0;
    for (const auto& c : l.drift_origins) {
      if (++shown > 5) {
        out += "  ... " + std::to_string(l.drift_origins.size() - 5) + " more (JSON/HTML)\n";
        break;
      }
      out += "  " + Safe(c.node) + " (" + Safe(c.op_type) + ") -> " + Safe(c.tensor) +
             ": max abs " + FormatNumber(c.metrics.max_abs) + ", max rel " +
             FormatNumber(c.metrics.max_rel) +
             (c.nodes_only_in_b.empty() ? "" : " (node only in B)") + "\n";
    }
    return out;
  }

  // PyTorch captures: module -> ONNX tensor, how matched (rows without a counterpart included)
  std::string AlignmentTable(const CompareReport& r) const {
    if (r.alignment.empty()) return "";
    std::string out =
        "PyTorch module (call)                         ONNX tensor                                 "
        "  how\n";
    size_t shown = 0;
    for (const auto& a : r.alignment) {
      if (a.method == AlignMethod::kContainer) continue;  // the same tensor as its last child
      if (++shown > o_.max_rows) {
        out += "  ... see the JSON or HTML report for the full alignment table\n";
        break;
      }
      std::string how = a.method == AlignMethod::kValue
                            ? "value, cosine " + Fmt("%.7g", a.confidence)
                            : std::string(AlignMethodName(a.method));
      if (a.onnx_tensor.empty()) how = "no counterpart: " + Safe(a.note);
      out += Pad(Clip(Safe(a.torch_name), 44), 44) + "  " +
             Pad(Clip(a.onnx_tensor.empty() ? "-" : Safe(a.onnx_tensor), 44), 44) + "  " + how +
             "\n";
    }
    return out + "\n";
  }

  std::string Culprits(const LocalizeResult& r) const {
    if (!r.ran) return "";
    std::string out;
    if (!r.note.empty()) out += "isolation: " + Safe(r.note) + "\n";
    if (r.culprits.empty()) return out;
    out += "isolation (each node run alone on B's runtime with A's inputs; " +
           std::to_string(r.isolation_runs) + " runs):\n";
    size_t rank = 0;
    for (size_t i = 0; i < r.culprits.size(); ++i) {
      const Culprit& c = r.culprits[i];
      if (++rank > 10) {
        out += "  ... " + std::to_string(r.culprits.size() - i) + " more\n";
        break;
      }
      // one node introducing error in several copies (a Loop/Scan body unrolled: one copy per
      // iteration, its tensors named by iteration) is one line
      size_t same = 1;
      double worst = c.metrics.max_rel;
      while (c.isolated && c.introduced && i + same < r.culprits.size()) {
        const Culprit& d = r.culprits[i + same];
        if (d.node != c.node || !d.isolated || !d.introduced || d.evidence != c.evidence) break;
        worst = std::max(worst, d.metrics.max_rel);
        ++same;
      }
      if (same > 1) {
        out += "  " + std::to_string(rank) + ". " + Safe(c.node) + " (" + Safe(c.op_type) +
               "): " + Color("1;31", "INTRODUCED") + " in each of " + std::to_string(same) +
               " copies (" + Safe(c.tensor) + " ... " + Safe(r.culprits[i + same - 1].tensor) +
               "), isolated max rel up to " + Fmt("%.2e", worst) + "\n";
        i += same - 1;
        continue;
      }
      std::string what = Safe(c.node) + " (" + Safe(c.op_type) + ")";
      if (!c.nodes_only_in_b.empty()) {
        std::string extra;
        for (const auto& n : c.nodes_only_in_b) extra += (extra.empty() ? "" : ", ") + n;
        what += " with nodes only in B: " + extra;
      }
      if (c.evidence == Evidence::kParity) {
        out += "  " + std::to_string(rank) + ". " + what + ": " + Color("1;31", "WEIGHT DIFFERS") +
               " from PyTorch's: " + Safe(c.reason) + "\n";
      } else if (!c.isolated) {
        out += "  " + std::to_string(rank) + ". " + what + ": not isolated: " + c.error + "\n";
      } else {
        out += "  " + std::to_string(rank) + ". " + what + ": " +
               (c.introduced ? Color("1;31", "INTRODUCED") : Color("33", "inherited")) +
               ", isolated max rel " + Fmt("%.2e", c.metrics.max_rel) + " vs accumulated " +
               Fmt("%.2e", c.accumulated_max_rel) + "\n";
      }
      if (!c.origin.empty()) out += "     in PyTorch: " + Safe(c.origin) + "\n";
      if (!c.fit.node.empty())
        out += "     its " + Safe(c.fit.constant) + " is " + FormatNumber(c.fit.value, 6) +
               "; with " + FormatNumber(c.fit.fitted, 6) + " it reproduces side A's value\n";
    }
    if (!r.repro_dir.empty())
      out += "repro bundle: " + r.repro_dir + " (replay: onnxprobe replay " + r.repro_dir + ")\n";
    return out;
  }

  static std::string ChannelNote(const TensorResult& t) {
    const auto& ch = t.metrics.channels;
    if (ch.size() < 2) return "";
    uint64_t total = 0;
    const ChannelError* worst = &ch[0];
    for (const auto& c : ch) {
      total += c.mismatches;
      if (c.mismatches > worst->mismatches) worst = &c;
    }
    if (total == 0 || worst->mismatches * 2 < total) return "";
    return "; mostly channel " + std::to_string(worst->channel) + " (" +
           std::to_string(100 * worst->mismatches / total) + "% of mismatches)";
  }

  ConsoleOptions o_;
};

}  // namespace

std::unique_ptr<Reporter> MakeConsoleReporter(const ConsoleOptions& options) {
  return std::make_unique<ConsoleReporter>(options);
}

}  // namespace onnxprobe
