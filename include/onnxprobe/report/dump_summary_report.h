// Renderings of dump summary results (src/report/dump_summary_report.cc).
#pragma once

#include <string>

#include "onnxprobe/capture/dump_summary.h"

namespace onnxprobe {

// Renderings (report/dump_summary_report.cc); the JSON has "schema": "onnxprobe-dump-inspect".
std::string RenderDumpSummaryText(const DumpSummary& s);
std::string RenderDumpSummaryJson(const DumpSummary& s);

}  // namespace onnxprobe
