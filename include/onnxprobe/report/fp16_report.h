// Renderings of fp16 results (src/report/fp16_report.cc).
#pragma once

#include <string>

#include "onnxprobe/fp16/fp16.h"

namespace onnxprobe {

// Terminal summary (`top` node rows) and versioned JSON ("schema": "onnxprobe-fp16").
std::string RenderFp16Text(const Fp16Report& report, size_t top = 10);
std::string RenderFp16Json(const Fp16Report& report);
Status WriteFp16Json(const Fp16Report& report, const std::string& path);

}  // namespace onnxprobe
