// Internal: the JSON document of a comparison, shared by the JSON and HTML reporters.
#pragma once

#include "onnxprobe/comparison.h"
#include "onnxprobe/json.h"

namespace onnxprobe {

constexpr int kReportSchemaVersion = 1;
void WriteComparisonJson(const ComparisonResult& r, JsonWriter& j);

}  // namespace onnxprobe
