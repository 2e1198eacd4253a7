// Renderings of lint results (src/report/lint_report.cc).
#pragma once

#include <string>

#include "onnxprobe/lint/lint.h"

namespace onnxprobe {

// Renderings of a finished report (report/lint_report.cc). The JSON is the versioned schema
// "onnxprobe-lint" (docs/lint.md).
std::string RenderLintText(const LintReport& r);
std::string RenderLintJson(const LintReport& r);

}  // namespace onnxprobe
