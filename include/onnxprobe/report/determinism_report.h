// Renderings of determinism results (src/report/determinism_report.cc).
#pragma once

#include <string>

#include "onnxprobe/capture/determinism.h"

namespace onnxprobe {

// Terminal summary and versioned JSON ("onnxprobe-determinism") of a report.
std::string RenderDeterminismText(const DeterminismReport& report);
std::string RenderDeterminismJson(const DeterminismReport& report);
Status WriteDeterminismJson(const DeterminismReport& report, const std::string& path);

}  // namespace onnxprobe
