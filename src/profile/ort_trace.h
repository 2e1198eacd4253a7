// Internal: ONNX Runtime's profiler trace (Chrome trace-event JSON) read into runs of kernel
// events. Node events are those of category "Node" whose args name a provider (the
// "<node>_kernel_time" events); runs are the "model_run" session events.
#pragma once

#include <string>
#include <vector>

#include "onnxprobe/common/status.h"
#include "onnxprobe/profile/profile.h"

namespace onnxprobe {

struct KernelEvent {
  std::string node, op_type, provider;
  double ts_us = 0, dur_us = 0;
};

struct TraceRun {
  double ts_us = 0, dur_us = 0;
  std::vector<KernelEvent> kernels;  // in start order
};

// The runs of the trace in time order, each with the kernel events inside it. Fails with
// kCorrupt naming `what` when the text is not a trace-event array or holds no run.
Expected<std::vector<TraceRun>> ParseOrtTrace(const std::string& text, const std::string& what);

// Fills report's nodes (first-seen order), by_op_type, by_provider, totals, run medians and
// not_run from runs[warmup:]: a node's time in a run is the sum of its calls there (0 in a run
// where it did not run), then the median over the runs. `model_nodes` are the model's node
// names in topological order (their position is a node's topo_index). kCorrupt when the trace
// holds no more runs than the warm-up.
Status AggregateTrace(const std::vector<TraceRun>& runs, int warmup,
                      const std::vector<std::string>& model_nodes, ProfileReport* report);

}  // namespace onnxprobe
