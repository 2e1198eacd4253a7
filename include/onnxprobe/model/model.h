// An ONNX model loaded for debugging: graph index (topological order, producers, consumers),
// summary for `inspect`, identity hashes. No protobuf type appears here.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "onnxprobe/common/hash.h"
#include "onnxprobe/common/status.h"
#include "onnxprobe/tensor/tensor.h"

namespace onnxprobe {

struct Dim {
  int64_t value = -1;  // -1 when unknown or symbolic
  std::string param;   // symbolic name, e.g. "batch"
};

struct ValueInfo {
  std::string name;
  int elem_type = 0;  // ONNX TensorProto.DataType; 0 when unknown
  bool has_shape = false;
  std::vector<Dim> dims;
};
// "float32[batch, 3, 224, 224]"
std::string ValueInfoTypeString(const ValueInfo& v);

struct NodeInfo {
  std::string name;
  std::string op_type;
  std::string domain;
  std::vector<std::string> inputs;  // "" for omitted optional inputs
  std::vector<std::string> outputs;
  int topo_index = 0;
  int file_index = 0;         // position in the file's node list
  bool has_subgraph = false;  // If/Loop/Scan bodies: their inner tensors are not capturable
  std::vector<std::string> implicit_inputs;  // outer-scope tensors its bodies read
};

enum class TensorKind { kGraphInput, kInitializer, kIntermediate, kGraphOutput, kSubgraph };
const char* TensorKindName(TensorKind k);

struct TensorEntry {
  std::string name;
  TensorKind kind = TensorKind::kIntermediate;
  int producer = -1;           // index into GraphIndex::nodes(); -1 for inputs and initializers
  std::vector<int> consumers;  // indices into nodes()
  int subgraph_owner = -1;     // for kSubgraph: the main-graph node whose body produces it
};

class GraphIndex {
 public:
  // Nodes of the main graph in topological order (stable: ties keep file order).
  const std::vector<NodeInfo>& nodes() const { return nodes_; }
  // Every tensor: inputs, initializers, then node outputs in topological order, then subgraph
  // tensors.
  const std::vector<TensorEntry>& tensors() const { return tensors_; }
  // Null when the graph has no tensor of that name.
  const TensorEntry* Find(const std::string& name) const;
  // Names of tensors that a run can capture (outputs of main-graph nodes), in topological order.
  std::vector<std::string> CapturableTensors() const;
  // The initializer `name` stands for: itself, or the one a chain of Identity nodes copies (an
  // exporter shares identical initializers that way); "" when it is neither.
  std::string InitializerBehind(const std::string& name) const;

 private:
  friend class ModelLoader;
  std::vector<NodeInfo> nodes_;
  std::vector<TensorEntry> tensors_;
  std::unordered_map<std::string, size_t> by_name_;
};

struct OpsetImport {
  std::string domain;  // "" is the default ONNX domain
  int64_t version = 0;
};

struct InitializerInfo {
  std::string name;
  int elem_type = 0;
  std::vector<int64_t> dims;
  uint64_t num_elements = 0;
  uint64_t num_bytes = 0;
  bool external = false;
};

struct ModelSummary {
  int64_t ir_version = 0;
  std::vector<OpsetImport> opsets;
  std::string producer_name, producer_version, domain, graph_name;
  int64_t model_version = 0;
  std::vector<ValueInfo> inputs;  // graph inputs that are not initializers
  std::vector<ValueInfo> outputs;
  std::map<std::string, int> op_counts;
  std::vector<InitializerInfo> initializers;
  // Initializers' elements and bytes, and those of the tensors Constant nodes hold (exporters
  // such as paddle2onnx, tf2onnx and spox keep weights there): constant_nodes of them, holding
  // constant_param_count of param_count.
  uint64_t param_count = 0;
  uint64_t param_bytes = 0;
  size_t constant_nodes = 0;
  uint64_t constant_param_count = 0;
  uint64_t float32_param_bytes = 0;  // of param_bytes, float32 weights (initializers, Constants)
};

struct InitializerHash {
  std::string name;
  std::string sha256;
};

// What proves "same model": the file's hashes and every main-graph initializer's SHA-256 (of its
// raw little-endian bytes, wherever they are stored: raw_data, typed fields or external data).
struct ModelIdentity {
  FileHashes file;
  std::vector<InitializerHash> initializers;  // in ModelSummary::initializers order
};

// Outputs of main-graph nodes that compute from initializers and such outputs alone (a Constant,
// an Identity or Transpose of a weight, a Shape of one): values fixed by the model, whatever runs
// it. A node without inputs other than Constant (a random generator) is not fixed.
std::set<std::string> TensorsFixedByModel(const GraphIndex& idx);
// The same question for one tensor: an initializer, or in TensorsFixedByModel (`depth`: the
// producers followed so far; a chain of more than 64 is taken as not fixed).
bool FixedByModel(const GraphIndex& idx, const std::string& name, int depth = 0);
// Whether `op_type` only copies, reorders or selects its data input's values by position
// (Reshape, Transpose, Concat, Slice, Gather ...): it adds no error and passes on what it reads.
bool MovesDataOnly(const std::string& op_type);

enum class LoadMode {
  // Reads the file once, streaming, and keeps the graph and where each large weight lies in the
  // file: sessions get the graph with those weights referenced as external data of the .onnx
  // file itself (the runtime maps them), graph passes that need weight values re-read the file.
  kFull,
  // Reads the file once, streaming, keeps the graph without its large weights and computes the
  // identity on the way; memory stays far below the file size. Sessions and graph passes refuse
  // such a model (kUnsupported).
  kGraphOnly,
};

class Model {
 public:
  // Loads and indexes `path`. Fails with kNotFound (missing file), kCorrupt (not ONNX,
  // truncated), kInvalidArgument (external data escaping the model folder, missing side file,
  // a graph that is not a DAG), kIoError (a read failed). The ONNX checker is advisory and
  // never fails a load.
  static Expected<Model> Load(const std::string& path, LoadMode mode = LoadMode::kFull);
  // A model rewritten in memory from `base` (a graph pass's result, e.g. InlineIfBranches): its
  // weights stay references into base's files, resolved against base's folder, and its path
  // (reports, the file's hashes) is base's. Fails like Load on bytes that are no model.
  static Expected<Model> Derived(const Model& base, std::string bytes);
  LoadMode load_mode() const;

  const std::string& path() const;
  const std::string& dir() const;  // folder external data is resolved against
  const GraphIndex& index() const;
  const ModelSummary& summary() const;
  // Warnings from the (advisory) ONNX 1.12 checker; empty when it passed.
  const std::vector<std::string>& checker_warnings() const;
  // Value info known from the file (inputs, outputs, value_info), by tensor name.
  const ValueInfo* FindValueInfo(const std::string& name) const;

  // The file's MD5 and SHA-256 and every initializer's SHA-256. kGraphOnly: computed while
  // loading. kFull: streamed from the file in one pass (MD5, SHA-256 and the weights' hashes on
  // their own threads). Fails when an external data file cannot be read.
  Expected<ModelIdentity> Identity() const;
  // MD5 (when asked) and SHA-256 of the model file (kGraphOnly: both, from the load).
  FileHashes Hashes(bool with_md5 = true) const;
  // SHA-256 of every initializer's data bytes, as in Identity().
  Expected<std::vector<std::pair<std::string, std::string>>> InitializerHashes() const;

  struct Impl;
  const Impl& impl() const { return *impl_; }

 private:
  std::shared_ptr<Impl> impl_;
};

// A main-graph node of a model file read without its weights (see ReadGraphNodes).
struct FileNode {
  std::string name, op_type, domain;
  std::vector<std::string> inputs, outputs;    // "" for omitted optional ones
  std::map<std::string, std::string> strings;  // the attributes of type STRING, by name
  std::string attributes;  // every attribute by name (a body or tensor by its size): equal text,
                           // equal attributes
};

// The main graph's nodes of the model file at `path`, in file order, read without its weights
// (external data is not resolved). Fails with kIoError (unreadable) or kCorrupt (not a model).
Expected<std::vector<FileNode>> ReadGraphNodes(const std::string& path);

// The value of a weight of `m`: an initializer or a Constant node's tensor, also behind a chain of
// Identity nodes (exporters share weights so); NotFound when `name` is computed.
Expected<Tensor> ConstantTensor(const Model& m, const std::string& name);

}  // namespace onnxprobe
