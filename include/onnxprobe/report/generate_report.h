// Renderings of a GenerateReport (generate/generate.h): console, JSON ("onnxprobe-generate",
// docs/generate.md) and one self-contained HTML page with the per-step divergence chart and the
// layer x position heat map of the cache difference.
#pragma once

#include <string>

#include "onnxprobe/generate/generate.h"
#include "onnxprobe/report/report.h"

namespace onnxprobe {

std::string RenderGenerateConsole(const GenerateReport& r, const ConsoleOptions& options);
std::string RenderGenerateJson(const GenerateReport& r);
std::string RenderGenerateHtml(const GenerateReport& r);
// Render and write atomically (whole or absent), failing with the OS reason.
Status WriteGenerateJson(const GenerateReport& r, const std::string& path);
Status WriteGenerateHtml(const GenerateReport& r, const std::string& path);

}  // namespace onnxprobe
