// Renderings of model diff results (src/report/model_diff_report.cc).
#pragma once

#include <string>

#include "onnxprobe/model/model_diff.h"

namespace onnxprobe {

// Renderings (report/model_diff_report.cc). JSON: schema "onnxprobe-diff" (docs/diff.md).
std::string RenderModelDiffText(const ModelDiff& d);
std::string RenderModelDiffJson(const ModelDiff& d);

}  // namespace onnxprobe
