// A Markdown summary of a comparison for a pull-request comment (`compare --markdown FILE`):
// the verdict, the two sides, the tensors furthest past (or closest to) their tolerance, where
// the error is introduced and why. GitHub and GitLab render it; it stays readable as text.
#include <algorithm>
#include <string>
#include <vector>

#include "onnxprobe/common/format.h"
#include "report/sinks.h"

namespace onnxprobe {
namespace {

// Its first line: what the output guard recognizes as ours.
constexpr const char* kMarker = "<!-- onnxprobe-compare markdown -->";
constexpr size_t kRows = 10;

// Text inside a table cell or `code`: no '|' (a new cell), '`' (ends the code) or line break.
std::string Cell(const std::string& s) {
  std::string out;
  for (char c : s) out += c == '|' ? '/' : c == '`' ? '\'' : c == '\n' || c == '\r' ? ' ' : c;
  return out;
}

std::string Code(const std::string& s) { return "`" + Cell(s) + "`"; }

std::string Verdict(const CompareReport& r) {
  if (r.comparison.aborted) return "ERROR";
  return r.passed() ? "PASS" : "FAIL";
}

std::string Render(const CompareReport& report) {
  const ComparisonResult& c = report.comparison;
  std::string v = Verdict(report);
  std::string md = std::string(kMarker) + "\n";
  md += "### onnxprobe compare: " + std::string(v == "PASS" ? "✅ " : "❌ ") + v + "\n\n";
  md += "- **A** (reference): " + Cell(c.describe_a) + "\n";
  md += "- **B** (under test): " + Cell(c.describe_b) + "\n";
  size_t compared = 0;
  for (const auto& row : c.rows) compared += row.state != RowState::kNotCompared;
  md += StringPrintf("- compared %zu tensors: %zu failed", compared, c.failures);
  if (c.first_failure >= 0) md += ", first divergence " + Code(c.rows[c.first_failure].name);
  md += "\n";
  for (const auto& line : c.unpaired_outputs) md += "- " + Cell(line) + "\n";
  for (const auto& line : c.nan_outputs) md += "- " + Cell(line) + "\n";
  if (c.aborted) md += "- stopped early: " + Cell(c.abort_status.message()) + "\n";

  // the rows that matter most: largest error / allowed error first
  std::vector<const TensorResult*> rows;
  for (const auto& row : c.rows)
    if (row.state == RowState::kCompared) rows.push_back(&row);
  std::stable_sort(rows.begin(), rows.end(), [](const TensorResult* x, const TensorResult* y) {
    return x->tolerance_ratio > y->tolerance_ratio;
  });
  if (rows.size() > kRows) rows.resize(kRows);
  if (!rows.empty()) {
    md += std::string("\n") + (v == "PASS" ? "Closest to tolerance" : "Furthest past tolerance") +
          ":\n\n| tensor | op | role | max abs | max rel | error / allowed |\n"
          "|---|---|---|---:|---:|---:|\n";
    for (const TensorResult* row : rows) {
      md += "| " + Code(row->name) + " | " + Cell(row->op_type) + " | " +
            (row->pass ? "pass" : RoleName(row->role)) + " | " +
            FormatNumber(row->metrics.max_abs) + " | " + FormatNumber(row->metrics.max_rel) +
            " | " + FormatNumber(row->tolerance_ratio) + " |\n";
    }
  }

  std::vector<const Culprit*> introduced;
  for (const auto& k : report.localization.culprits)
    if (k.introduced) introduced.push_back(&k);
  if (!introduced.empty()) {
    md +=
        "\nWhere the error is introduced (each node run alone on B's runtime with A's inputs):"
        "\n\n| node | op | tensor | isolated max rel |\n|---|---|---|---:|\n";
    for (const Culprit* k : introduced) {
      md += "| " + Code(k->node) + " | " + Cell(k->op_type) + " | " + Code(k->tensor) + " | " +
            FormatNumber(k->metrics.max_rel) + " |\n";
    }
  } else if (!report.origin_note.empty()) {
    md += "\n" + Cell(report.origin_note) + "\n";
  }
  for (const auto& f : report.diagnosis.findings) {
    md += "\n**Why " + Code(f.node) + ":** " + Cell(f.summary);
    if (!f.fix.summary.empty()) md += " **Fix:** " + Cell(f.fix.summary);
    md += "\n";
  }
  md += "\n<sub>onnxprobe compare; the full report: --html / --json</sub>\n";
  return md;
}

}  // namespace

ReportSink MarkdownSink() {
  ReportSink k;
  k.format = "markdown";
  k.flag = "--markdown";
  k.help =
      "a Markdown summary for a pull-request comment: verdict, sides, the tensors furthest past "
      "tolerance, where the error is introduced and why (with samples: the focus sample)";
  k.label = "Markdown summary";
  k.artifact.name = "Markdown summary";
  k.artifact.ours = [](const std::string& path, bool is_dir) {
    return !is_dir && FileHead(path, 64).rfind(kMarker, 0) == 0;
  };
  k.render = [](const CompareReport& r, const RenderContext&) { return Render(r); };
  return k;
}

}  // namespace onnxprobe
