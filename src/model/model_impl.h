// Internal: the protobuf behind a Model. Included only by .cc files of model/, graph/, backend/.
#pragma once

#include <onnx/onnx_pb.h>

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "onnxprobe/model.h"

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

  // The model's serialization: the file's own bytes, kept from loading, so sessions never pay
  // for re-serializing the weights. Empty for kGraphOnly (see RequireBytes).
  const std::string& SerializedProto() const { return serialized; }
  std::string serialized;

  // kUnsupported for a kGraphOnly model, which holds no weights to run or rewrite.
  Status RequireBytes() const;

  // The model with its weights, parsed again from `serialized` on first use (the indexed
  // `proto` drops large initializer bytes). Null if the bytes stopped parsing or were not kept.
  const onnx::ModelProto* FullProto() const;
  mutable std::once_flag full_once;
  mutable std::unique_ptr<onnx::ModelProto> full;
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

// The kFull load: reads and parses the whole file, keeping its bytes.
Status LoadFull(Model::Impl* impl);
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
