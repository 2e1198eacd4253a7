// Internal: each live side's latency and peak memory, measured after the comparison.
#pragma once

#include <vector>

#include "onnxprobe/pipeline/engine.h"
#include "onnxprobe/side/side.h"

namespace onnxprobe {

// Fills report->resources_a/_b for live sides when request.latency_runs > 0 (in-process
// sessions, so not with isolate_runtime). Fails like LoadOrtBackend and MeasureLatency.
Status MeasureSideResources(const CompareRequest& request, Side& a, Side& b,
                            const std::vector<NamedTensor>& inputs, CompareReport* report);

}  // namespace onnxprobe
