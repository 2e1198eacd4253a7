// Where a session's nodes run: which model nodes another execution provider (OpenVINO, CUDA,
// TensorRT, ...) takes and which it leaves to the CPU provider, found from one profiled run with
// CPU fallback allowed. A comparison that refuses fallback names the nodes from it; one that
// allows fallback reports them.
#pragma once

#include <string>
#include <vector>

#include "onnxprobe/backend/backend.h"
#include "onnxprobe/capture/capture.h"

namespace onnxprobe {

struct Placement {
  std::string provider;  // the provider asked for (full name)
  size_t model_nodes = 0;
  // The provider's own kernels and compiled partitions, as the runtime names them
  // ("OpenVINOExecutionProvider_OpenVINO-EP-subgraph_1_0").
  std::vector<std::string> partitions;
  // Model nodes the CPU provider ran, "name (OpType)", in the order they ran; by name alone.
  std::vector<std::string> on_cpu;
  std::vector<std::string> on_cpu_nodes;
  bool complete() const { return on_cpu.empty(); }
};

// One run of `model` on `session` with CPU fallback allowed and the runtime's profiler on.
// Fails like Profile() (profile.h).
Expected<Placement> FindPlacement(const std::string& model_path, const std::string& ort_library,
                                  const SessionOptions& session,
                                  const std::vector<NamedTensor>& inputs);

// The provider that ran model node `node` ("CPUExecutionProvider" for one left to the CPU
// provider); "" when the placement was not found.
std::string ProviderOfNode(const Placement& p, const std::string& node);

// The nodes the CPU provider runs, "a (Relu), b (Hardmax)": the first 8 named, then how many more.
std::string CpuNodeList(const Placement& p);

// "OpenVINOExecutionProvider runs 2 of 3 nodes (1 compiled partition); the CPU provider runs
// 1: hardmax (Hardmax)" (the first 8 nodes named, then how many more).
std::string DescribePlacement(const Placement& p);

}  // namespace onnxprobe
