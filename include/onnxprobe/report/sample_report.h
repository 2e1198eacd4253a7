// Renderings of a comparison over several input samples: console summary (a line per sample
// and the per-tensor aggregates), the JSON document "onnxprobe-compare-samples" (each sample's
// full "onnxprobe-compare" report plus the aggregates) and JUnit suites (one per sample).
#pragma once

#include <string>
#include <vector>

#include "onnxprobe/pipeline/sample_compare.h"
#include "onnxprobe/report/junit.h"
#include "onnxprobe/report/report.h"

namespace onnxprobe {

// The aggregates as a table (worst and mean across samples, worst sample named).
std::string RenderAggregateTable(const std::vector<TensorAggregate>& tensors);
std::string RenderSamplesConsole(const SamplesCompareReport& r);
std::string RenderSamplesJson(const SamplesCompareReport& r,
                              ReportDetail detail = ReportDetail::kCompact);
Status WriteSamplesJson(const SamplesCompareReport& r, const std::string& path,
                        ReportDetail detail = ReportDetail::kCompact);
// classname = `classname`, case names "<sample>/<tensor>".
std::vector<JUnitSuite> SamplesJUnit(const SamplesCompareReport& r, const std::string& classname);

}  // namespace onnxprobe
