// Internal: ONNX Runtime's profiler trace (Chrome trace-event JSON) read into runs of kernel
// events. Node events are those of category "Node" whose args name a provider (the
// "<node>_kernel_time" events); runs are the "model_run" session events.
#pragma once

#include <string>
#include <vector>

#include "onnxprobe/status.h"

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

}  // namespace onnxprobe
