// SummarizeDump: statistics of every tensor of a dump (or plain .npz), read one at a time.
#include "onnxprobe/capture/dump_summary.h"

#include <filesystem>

#include "onnxprobe/tensor/npy.h"

namespace fs = std::filesystem;

namespace onnxprobe {
namespace {

void AddTensor(DumpSummary* s, DumpTensorSummary t, const Tensor& data) {
  t.dtype = data.dtype();
  t.shape = data.shape();
  t.bytes = data.byte_size();
  t.stats = ComputeStats(data);
  s->total_bytes += t.bytes;
  if (t.stats.nan_count + t.stats.inf_count > 0) {
    if (s->first_nonfinite < 0) s->first_nonfinite = static_cast<int>(s->tensors.size());
    ++s->nonfinite_tensors;
  }
  s->tensors.push_back(std::move(t));
}

Expected<DumpSummary> SummarizePlainNpz(const std::string& path) {
  DumpSummary s;
  s.path = path;
  s.layout = DumpLayout::kPlainNpz;
  OP_ASSIGN_OR_RETURN(auto npz, NpzReader::Open(path));
  for (const std::string& key : npz->keys()) {
    OP_ASSIGN_OR_RETURN(Tensor t, npz->Read(key));
    DumpTensorSummary e;
    e.name = key;
    AddTensor(&s, std::move(e), t);
  }
  return s;
}

}  // namespace

const char* DumpLayoutName(DumpLayout l) {
  switch (l) {
    case DumpLayout::kFolder:
      return "folder";
    case DumpLayout::kNpz:
      return "npz";
    case DumpLayout::kPlainNpz:
      return "plain-npz";
  }
  return "?";
}

Expected<DumpSummary> SummarizeDump(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return NotFound(path + ": no such dump (folder or .npz)");
  if (!IsDumpPath(path)) {
    if (fs::path(path).extension() == ".npz") return SummarizePlainNpz(path);
    return InvalidArgument(path + ": not a dump (a folder or an .npz)");
  }
  OP_ASSIGN_OR_RETURN(auto reader, DumpReader::Open(path));
  DumpSummary s;
  s.path = path;
  s.layout = fs::is_directory(path, ec) ? DumpLayout::kFolder : DumpLayout::kNpz;
  s.metadata = reader->metadata();
  for (const DumpEntry& e : reader->entries()) {
    OP_ASSIGN_OR_RETURN(Tensor t, reader->Load(e));
    DumpTensorSummary d;
    d.name = e.name;
    d.is_input = e.kind == DumpEntryKind::kInput;
    d.node = e.node;
    d.op_type = e.op_type;
    d.topo_index = e.topo_index;
    d.module = e.module;
    AddTensor(&s, std::move(d), t);
  }
  return s;
}

}  // namespace onnxprobe
