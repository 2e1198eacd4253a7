// What a dump holds (`onnxprobe inspect DUMP`): its tensors with shapes, dtypes and statistics
// computed from the stored data, and the manifest's metadata. Also reads a plain .npz.
#pragma once

#include <string>
#include <vector>

#include "onnxprobe/capture/dump.h"
#include "onnxprobe/tensor/tensor.h"

namespace onnxprobe {

enum class DumpLayout { kFolder, kNpz, kPlainNpz };  // plain: arrays without a manifest
const char* DumpLayoutName(DumpLayout l);            // "folder", "npz", "plain-npz"

struct DumpTensorSummary {
  std::string name;
  bool is_input = false;
  std::string node, op_type;  // producing node (dumps with a manifest)
  int topo_index = -1;
  std::string module;  // PyTorch captures: the module that produced it
  DType dtype = DType::kFloat32;
  Shape shape;
  uint64_t bytes = 0;  // in memory, as dtype
  TensorStats stats;   // over the finite values, from the stored data
};

struct DumpSummary {
  std::string path;
  DumpLayout layout = DumpLayout::kFolder;
  DumpMetadata metadata;                   // empty for a plain .npz
  std::vector<DumpTensorSummary> tensors;  // inputs first, then topological order
  uint64_t total_bytes = 0;
  size_t nonfinite_tensors = 0;  // tensors holding any NaN or Inf
  int first_nonfinite = -1;      // index into `tensors`, -1 when every value is finite
};

// Reads every tensor once (one at a time, so memory stays at the largest tensor). Fails like
// DumpReader::Open / Load (kNotFound, kInvalidArgument for a path that is no dump, kCorrupt
// naming the tensor whose data disagrees with the manifest).
Expected<DumpSummary> SummarizeDump(const std::string& path);

}  // namespace onnxprobe
