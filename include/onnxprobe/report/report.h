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
// Versioned schema "onnxprobe-compare" (docs/report-json.md).
std::unique_ptr<Reporter> MakeJsonReporter();
// One self-contained page: inline CSS, JS and SVG, no network access.
std::unique_ptr<Reporter> MakeHtmlReporter();
// Google Model Explorer node data (docs/report-json.md): per node, the largest error / allowed
// error of its outputs, keyed by graph name and node name, with color thresholds.
std::unique_ptr<Reporter> MakeModelExplorerReporter();

// Renders and writes atomically (temporary name, then rename).
Status WriteReport(const Reporter& reporter, const CompareReport& r, const std::string& path);

// Rows compared in full, the `n` nearest to (or furthest beyond) their tolerance first: what a
// report leads with on PASS and FAIL alike.
std::vector<int> ClosestToTolerance(const ComparisonResult& r, size_t n);

}  // namespace onnxprobe
