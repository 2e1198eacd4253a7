// Output formats for a comparison, behind one interface: terminal table, JSON, HTML.
// Reporters know nothing of ONNX Runtime; they render a ComparisonResult.
#pragma once

#include <memory>
#include <string>

#include "onnxprobe/comparison.h"

namespace onnxprobe {

class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual std::string Render(const ComparisonResult& r) const = 0;
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

// Renders and writes atomically (temporary name, then rename).
Status WriteReport(const Reporter& reporter, const ComparisonResult& r, const std::string& path);

}  // namespace onnxprobe
