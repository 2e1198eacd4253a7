// Internal: the JSON document of a comparison, shared by the JSON and HTML reporters.
#pragma once

#include <vector>

#include "onnxprobe/common/json.h"
#include "onnxprobe/pipeline/engine.h"
#include "onnxprobe/pipeline/sample_compare.h"
#include "onnxprobe/report/report.h"

namespace onnxprobe {

constexpr int kReportSchemaVersion = 1;
// A compact row's per-channel errors beyond this many channels: the kCompactChannelsKept with
// the most mismatches (then the largest error), in channel order, with `channels_total`. The
// HTML page draws every channel up to 128 and the 64 largest beyond: the same two numbers.
constexpr size_t kCompactChannels = 128, kCompactChannelsKept = 64;
void WriteComparisonJson(const CompareReport& r, JsonWriter& j,
                         ReportDetail detail = ReportDetail::kCompact);
// Each tensor over the samples, the samples report's "tensors" (docs/shard.md).
void AggregatesJson(const std::vector<TensorAggregate>& tensors, JsonWriter& j);
// The providers that ran a row's node on each side, where a side's placement was found.
struct RowProviders {
  std::string a, b;
};
// One compared row as the report's "tensors" hold it (docs/report-json.md): every measurement
// (`full`), or the summary of a compact document's other rows.
void RowJson(JsonWriter& j, const TensorResult& t, size_t index, bool full = true,
             ReportDetail detail = ReportDetail::kFull, const RowProviders& providers = {});
// Per row of r.comparison: whether a document of `detail` writes it in full.
std::vector<bool> FullRows(const CompareReport& r, ReportDetail detail);

}  // namespace onnxprobe
