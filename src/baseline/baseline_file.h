// Internal: baseline.json written and read as one document (the Baseline struct).
#pragma once

#include <string>

#include "onnxprobe/baseline/baseline.h"

namespace onnxprobe {

constexpr const char* kBaselineFormat = "onnxprobe-baseline";
constexpr int kBaselineFormatVersion = 1;

std::string BaselineJson(const Baseline& b);

}  // namespace onnxprobe
