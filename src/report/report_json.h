// Internal: the JSON document of a comparison, shared by the JSON and HTML reporters.
#pragma once

#include <vector>

#include "onnxprobe/engine.h"
#include "onnxprobe/json.h"

namespace onnxprobe {

constexpr int kReportSchemaVersion = 1;
void WriteComparisonJson(const CompareReport& r, JsonWriter& j);
// One compared row as the report's "rows" hold it (docs/report-json.md).
void RowJson(JsonWriter& j, const TensorResult& t, size_t index);

}  // namespace onnxprobe
