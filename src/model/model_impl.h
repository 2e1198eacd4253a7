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
  onnx::ModelProto proto;
  GraphIndex index;
  ModelSummary summary;
  std::vector<std::string> checker_warnings;
  std::unordered_map<std::string, ValueInfo> value_infos;

  // The model's serialization: the file's own bytes, kept from loading, so sessions never pay
  // for re-serializing the weights.
  const std::string& SerializedProto() const { return serialized; }
  std::string serialized;

  // The model with its weights, parsed again from `serialized` on first use (the indexed
  // `proto` drops large initializer bytes). Fails only if the bytes stopped parsing.
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
