// Renderings of sweep results (src/report/sweep_report.cc).
#pragma once

#include <string>

#include "onnxprobe/pipeline/sweep.h"

namespace onnxprobe {

// Renderings (report/sweep_report.cc): a table with one line per shape (verdict, failing rows,
// worst tensor, first failure), and the JSON "schema": "onnxprobe-sweep" holding that summary
// and each shape's complete "onnxprobe-compare" report.
std::string RenderSweepText(const SweepReport& r);
std::string RenderSweepJson(const SweepReport& r);
// Writes RenderSweepJson atomically (temporary name, then rename).
Status WriteSweepJson(const SweepReport& r, const std::string& path);

}  // namespace onnxprobe
