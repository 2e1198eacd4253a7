// Internal: a protobuf wire-format scan of a serialized ModelProto that hashes the large raw_data
// of the main graph's initializers as the bytes stream by and keeps everything else, so a model
// can be indexed and identified without ever holding its weights.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/chunk_fanout.h"

namespace onnx {
class ModelProto;
}

namespace onnxprobe {

// raw_data up to this size stays in the parsed graph (shape inference folds small constants);
// larger weights are not kept once loaded.
constexpr size_t kKeptRawDataBytes = 4096;

struct ScannedInitializer {
  std::string fields;          // the serialized TensorProto without a set-aside raw_data
  bool raw_set_aside = false;  // its raw_data was over kKeptRawDataBytes: hashed, not kept
  std::string raw_sha256;      // SHA-256 of that raw_data (not with ScanKeep::kFieldsUnhashed)
  uint64_t raw_offset = 0;     // where that raw_data lies in the scanned bytes, and its size
  uint64_t raw_size = 0;
};

struct ModelScan {
  std::string model_fields;  // ModelProto fields other than graph
  bool has_graph = false;
  std::string graph_fields;  // GraphProto fields other than initializer, every occurrence in order
  std::vector<ScannedInitializer> initializers;  // in file order, as protobuf would merge them
};

// kFieldsUnhashed keeps the fields and where each set-aside raw_data lies, without hashing it.
enum class ScanKeep { kFields, kHashesOnly, kFieldsUnhashed };

// Scans `size` bytes of `stream` as a ModelProto (unknown fields are kept, like protobuf does).
// kHashesOnly keeps no fields, only the set-aside hashes. Returns false when the bytes take a shape
// the scan does not follow (truncation, overlong lengths, groups, raw_data given twice in one
// tensor): the caller then parses the file with protobuf, which reports real corruption.
bool ScanModel(ChunkStream& stream, uint64_t size, ScanKeep keep, ModelScan* out);

// Parses the kept fields into `proto`; a set-aside raw_data becomes one placeholder byte, so the
// ONNX checker still sees a tensor with data (it never reads raw_data's length). False when a
// fragment does not parse.
bool AssembleModel(const ModelScan& scan, onnx::ModelProto* proto);

}  // namespace onnxprobe
