// Output formats for a comparison, behind one interface: terminal table, JSON, HTML.
// Reporters know nothing of ONNX Runtime; they render the complete CompareReport.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "onnxprobe/pipeline/engine.h"

namespace onnxprobe {

class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual std::string Render(const CompareReport& r) const = 0;
};

struct ConsoleOptions {
  bool color = false;
  size_t context = 8;    // rows shown before and after the first divergence
  size_t max_rows = 40;  // cap on table rows
  bool quiet = false;    // summary lines only
};

std::unique_ptr<Reporter> MakeConsoleReporter(const ConsoleOptions& options);

// How much of each tensor row the JSON document (and the HTML page built on it) holds.
// kCompact: every measurement (statistics, histogram, per-channel errors) for the rows a reader
// acts on (failing, beyond tolerance, introduced or inherited, a graph output, a culprit's or
// drift origin's tensor, the first difference), a summary (names, verdict, shapes, max errors,
// cosine) for the rest, and at most kCompactChannels channels per row; a 4,000-node model's
// document stays a few MB. kFull: everything for every row (docs/report-json.md).
enum class ReportDetail { kCompact, kFull };
const char* ReportDetailName(ReportDetail d);
// "compact" or "full"; false otherwise.
bool ParseReportDetail(const std::string& text, ReportDetail* out);

// Versioned schema "onnxprobe-compare" (docs/report-json.md).
std::unique_ptr<Reporter> MakeJsonReporter(ReportDetail detail = ReportDetail::kCompact);
// One self-contained page: inline CSS, JS and SVG, no network access.
std::unique_ptr<Reporter> MakeHtmlReporter(ReportDetail detail = ReportDetail::kCompact);
// Google Model Explorer node data (docs/report-json.md): per node, the largest error / allowed
// error of its outputs, keyed by graph name and node name, with color thresholds.
std::unique_ptr<Reporter> MakeModelExplorerReporter();

// Renders and writes atomically (temporary name, then rename).
Status WriteReport(const Reporter& reporter, const CompareReport& r, const std::string& path);

// Rows compared in full, the `n` nearest to (or furthest beyond) their tolerance first: what a
// report leads with on PASS and FAIL alike.
std::vector<int> ClosestToTolerance(const ComparisonResult& r, size_t n);

}  // namespace onnxprobe
