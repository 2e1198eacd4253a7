// The compare report's file formats, each a sink: the flag that asks for it, how it renders a
// comparison (and a comparison over input samples), the line the console prints once it is
// written, and how the output guard recognizes an earlier file of ours. `compare` declares one
// option per sink and writes them in one loop; Python's Report renders and writes them by name
// (Report.render(format), Report.write(format, path)). Adding a format: its renderer in a file
// of its own (src/report/), declared in src/report/sinks.h and listed in formats.cc.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "onnxprobe/capture/output_guard.h"
#include "onnxprobe/common/status.h"
#include "onnxprobe/pipeline/sample_compare.h"
#include "onnxprobe/report/report.h"

namespace onnxprobe {

// What a renderer may need besides the report.
struct RenderContext {
  ReportDetail detail = ReportDetail::kCompact;
  std::string side_b;                         // side B's path (JUnit's class name)
  std::map<std::string, double> row_seconds;  // seconds each row took (JUnit)
  double seconds = 0;                         // the whole comparison (JUnit)
};

struct ReportSink {
  std::string format;  // "json", "html", "junit", "model-explorer", "markdown"
  std::string flag;    // "--json"
  std::string help;
  std::string label;  // "JSON report": the console says "<label>: <path>" once it is written
  OutputArtifact artifact;
  std::function<std::string(const CompareReport&, const RenderContext&)> render;
  // over input samples, the whole set; empty: the focus sample's report through `render` (the
  // first failing sample, else the one closest to its tolerance; the console names it)
  std::function<std::string(const SamplesCompareReport&, const RenderContext&)> render_samples;
};

// Every format, in --help order.
const std::vector<ReportSink>& CompareSinks();
// One by name; InvalidArgument naming the known ones.
Expected<const ReportSink*> FindCompareSink(const std::string& format);

}  // namespace onnxprobe
