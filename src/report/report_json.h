// Internal: the JSON document of a comparison, shared by the JSON and HTML reporters.
#pragma once

#include <vector>

#include "onnxprobe/common/json.h"
#include "onnxprobe/pipeline/engine.h"
#include "onnxprobe/pipeline/sample_compare.h"

namespace onnxprobe {

constexpr int kReportSchemaVersion = 1;
void WriteComparisonJson(const CompareReport& r, JsonWriter& j);
// Each tensor over the samples, the samples report's "tensors" (docs/shard.md).
void AggregatesJson(const std::vector<TensorAggregate>& tensors, JsonWriter& j);
// One compared row as the report's "rows" hold it (docs/report-json.md).
void RowJson(JsonWriter& j, const TensorResult& t, size_t index);

}  // namespace onnxprobe
