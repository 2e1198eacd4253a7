// Internal: the protobuf behind a Model. Included only by .cc files of model/, graph/, backend/.
#pragma once

#include <onnx/onnx_pb.h>

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "onnxprobe/model/model.h"

namespace onnxprobe {

struct Model::Impl {
  std::string path, dir;
  LoadMode mode = LoadMode::kFull;
  ModelIdentity identity;  // kGraphOnly: computed while the file streamed by
  onnx::ModelProto proto;
  GraphIndex index;
  ModelSummary summary;
  std::vector<std::string> checker_warnings;
  std::unordered_map<std::string, ValueInfo> value_infos;

  // The model's serialization for sessions and graph passes, built once. The graph as loaded,
  // with each large embedded weight (raw_data) turned into an external data reference to its
  // own bytes in the .onnx file: the runtime maps them from the file instead of receiving a
  // copy. The file's own bytes when they were kept (a file the scan did not follow). Empty for
  // kGraphOnly (see RequireBytes).
  const std::string& SerializedProto() const;
  std::string serialized;  // the file's bytes: kept by the protobuf-parse load only
  struct FileRange {
    int initializer;  // position in the main graph
    uint64_t offset, size;
  };
  std::vector<FileRange> embedded;  // large raw_data of main-graph initializers, in the file
  std::string embedded_location;    // the file's name as those references give it (`dir` holds it)
  mutable std::once_flag session_once;
  mutable std::string session_bytes;

  // kUnsupported for a kGraphOnly model, which holds no weights to run or rewrite.
  Status RequireBytes() const;
  // The session serialization parsed into a proto a graph pass may edit (large weights stay
  // references into the file). Fails like RequireBytes, or kCorrupt when it does not parse.
  Expected<onnx::ModelProto> EditableProto(const std::string& path) const;

  // The model with its weights, parsed again from `serialized` or the file on first use (the
  // indexed `proto` drops large initializer bytes). Null if they stopped parsing, or kGraphOnly.
  const onnx::ModelProto* FullProto() const;
  mutable std::once_flag full_once;
  mutable std::unique_ptr<onnx::ModelProto> full;

  // The file's hashes, computed once (kFull): both sides of a comparison of one file share this
  // Model, and each asks for its SHA-256. The lock is held while hashing, so a second caller
  // waits for the first one's result instead of reading the file again.
  mutable std::mutex hashes_mu;
  mutable FileHashes hashes;
};

// The one place allowed to fill a GraphIndex (its friend).
class ModelLoader {
 public:
  static void Fill(GraphIndex* g, std::vector<NodeInfo> nodes, std::vector<TensorEntry> tensors,
                   std::unordered_map<std::string, size_t> by_name) {
    g->nodes_ = std::move(nodes);
    g->tensors_ = std::move(tensors);
    g->by_name_ = std::move(by_name);
  }
};

// The checks made before reading a model file (missing, a folder, empty, over protobuf's 2 GB
// limit); returns its size.
Expected<uint64_t> CheckModelFile(const std::string& path);

// Loading steps shared by both modes once `impl->proto` holds the parsed model: external data
// checks, graph index, summary, the advisory checker; then the graph drops weight bytes over
// kKeptRawDataBytes and the placeholders of initializers marked in `set_aside` (by position).
Status IndexModel(Model::Impl* impl, const std::vector<bool>& set_aside);

// The kFull load: one streaming read that keeps the graph and where each large weight lies in
// the file (never the weights); LoadParsed when the scan does not follow the file.
Status LoadFull(Model::Impl* impl);
// Reads and parses the whole file with protobuf, keeping its bytes.
Status LoadParsed(Model::Impl* impl);
// The kGraphOnly load: one streaming read that also computes the identity (model_identity.cc).
Status LoadGraphOnly(Model::Impl* impl);

// Validates an initializer's external data reference and returns the side file's path.
// Rejects absolute locations, "..", symlinks that leave the model folder, missing files and
// ranges past the file end, naming the initializer and the location.
Expected<std::string> ResolveExternalData(const onnx::TensorProto& t, const std::string& model_dir,
                                          uint64_t* offset, uint64_t* length);

// Reads the bytes of an externally stored initializer.
Expected<std::string> ReadExternalData(const onnx::TensorProto& t, const std::string& model_dir);

ValueInfo ValueInfoFromProto(const onnx::ValueInfoProto& v);

// Builds the graph index; fails when the graph has a cycle or a node input nobody produces.
Status BuildGraphIndex(const onnx::GraphProto& g, GraphIndex* index);

}  // namespace onnxprobe
