// ONNX Runtime's blocked-channel layout (NCHWc, optimization level "all" on a CPU with wide
// vector units): the tensors between its ReorderInput and ReorderOutput nodes carry the runtime's
// own names, so a graph read back by name seems to have fused them away.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "onnxprobe/model/model.h"

namespace onnxprobe {

// The tensors of the original graph `idx` that the blocked-layout nodes of the runtime's
// optimized graph `optimized` compute, by the runtime's naming: a node of the layout's domain is
// named after the tensor it replaces ("<tensor>_nchwc", "<tensor>_bn_nchwc"), then absorbs the
// Add it sums into and its activation; a standard node working on blocked tensors keeps its
// original name. Tensors in `present` are left out. Marking these as outputs adds a reorder
// after each and should block nothing: callers confirm that (SameKernels) before relying on it,
// rule by rule where all together do not pass (a runtime may fuse an activation only while its
// output is no graph output).
struct BlockedTensor {
  std::string name;  // the original tensor
  std::string rule;  // how it was found: "Conv+Add+Relu", "MaxPool", "kept Concat", ...
};
std::vector<BlockedTensor> BlockedLayoutTensors(const GraphIndex& idx,
                                                const std::vector<FileNode>& optimized,
                                                const std::set<std::string>& present);

// Whether two optimized graphs run the same kernels with the same attributes, the layout's
// reorders back to the standard layout aside.
bool SameKernels(const std::vector<FileNode>& x, const std::vector<FileNode>& y);

}  // namespace onnxprobe
