// MeasureSideResources: plain runs of each live side in a session of its own, one side at a
// time, so each side's peak memory is its own.
#include "pipeline/side_resources.h"

#include <tuple>

#include "onnxprobe/backend/platform.h"

namespace onnxprobe {

Status MeasureSideResources(const CompareRequest& req, Side& a, Side& b,
                            const std::vector<NamedTensor>& inputs, CompareReport* report) {
  if (req.latency_runs <= 0 || req.isolate_runtime) return Status::Ok();
  for (auto [side, request, out] :
       {std::tuple<Side*, const SideRequest*, SideResources*>{&a, &req.a, &report->resources_a},
        {&b, &req.b, &report->resources_b}}) {
    const Model* model = side->model();
    if (model == nullptr) continue;  // a dump runs nothing
    OP_ASSIGN_OR_RETURN(auto backend, LoadBackend(request->ort_library));
    LatencyOptions runs;
    runs.runs = req.latency_runs;
    runs.max_measured_ms = req.latency_max_ms;
    auto m = MeasureLatency(*model, *backend, side->session_options(), inputs, runs, false);
    if (!m.ok()) return m.status().WithContext(side == &a ? "side A latency" : "side B latency");
    out->measured = true;
    out->latency = m->latency;
    out->memory = m->memory;
  }
  return Status::Ok();
}

}  // namespace onnxprobe
