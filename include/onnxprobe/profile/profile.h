// `onnxprobe profile MODEL` as one call: ONNX Runtime's profiler on N runs, its trace parsed
// and aggregated per node (median over runs), by op type and by provider, with node placement
// and peak memory.
#pragma once

#include <string>
#include <vector>

#include "onnxprobe/capture/capture.h"
#include "onnxprobe/profile/latency.h"

namespace onnxprobe {

struct ProfileRequest {
  std::string model_path;
  InputOptions inputs;
  SessionOptions session;
  std::string ort_library;  // "" = the default runtime
  LatencyOptions runs;      // warm-up runs are profiled but left out of the figures
  // Also keep the runtime's trace (Chrome trace-event JSON, for chrome://tracing or Perfetto)
  // at this path, written atomically; "" = the trace is only read, then removed.
  std::string trace_output;
};

struct NodeProfile {
  std::string node;  // the node name the runtime reports (a fused node has a name of its own)
  std::string op_type, provider;
  int topo_index = -1;  // in the model (of its first original node); -1 for a node the runtime made
  // The model's nodes a node the runtime made computes, in graph order: "X_nchwc" (the blocked
  // layout) is the node producing tensor X, with the nodes fused into it back to one of the
  // runtime node's op type (Conv + Relu). Empty for the model's own nodes and layout changes.
  std::vector<std::string> original_nodes;
  int calls = 0;  // kernel calls in one run (more than one inside loops)
  double median_us = 0, min_us = 0, max_us = 0;  // the node's time in one run, over the runs
  double share = 0;                              // of the sum of every node's median
};

struct TimeGroup {
  std::string name;  // op type or provider
  size_t nodes = 0;
  double total_us = 0;  // sum of its nodes' medians
  double share = 0;     // of the sum of every node's median
};

struct ProfileReport {
  std::string model_path, runtime, runtime_version;
  SessionOptions session;
  std::vector<NodeProfile> nodes;                  // in the order the runtime ran them
  std::vector<TimeGroup> by_op_type, by_provider;  // slowest first
  // Sum of node medians (= sum of either grouping): a run without the slow outliers each run
  // has somewhere, so below kernels_run_median_us on a busy machine.
  double nodes_total_us = 0;
  double kernels_run_median_us = 0;  // all kernels' time in one run, median over the runs
  double run_median_us = 0;  // the runtime's own time for a whole run (its model_run), median
  LatencyStats latency;      // wall clock around each run, as a caller sees it
  PeakMemory memory;
  // Model nodes that do not appear in the trace: fused into others or folded away by the
  // runtime's optimizations.
  std::vector<std::string> not_run;
  std::vector<std::string> notes;  // how inputs were bound when the request did not spell it out
};

// Fails like Model::Load, PrepareInputs, LoadOrtBackend and MeasureLatency; kCorrupt when the
// runtime's trace cannot be read (naming the trace), kIoError when trace_output cannot be
// written. The runtime's own trace file is removed in every case.
Expected<ProfileReport> Profile(const ProfileRequest& request);

}  // namespace onnxprobe
