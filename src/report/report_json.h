// Internal: the JSON document of a comparison, shared by the JSON and HTML reporters.
#pragma once

#include <vector>

#include "onnxprobe/engine.h"
#include "onnxprobe/json.h"

namespace onnxprobe {

constexpr int kReportSchemaVersion = 1;
void WriteComparisonJson(const CompareReport& r, JsonWriter& j);

}  // namespace onnxprobe
