// Float16 graph passes: which nodes can run in float16 (from the operator schemas), a model that
// runs many single nodes in float16 side by side, and the mixed-precision conversion. Each pass
// returns a new serialized model; the Model is unchanged.
#pragma once

#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "onnxprobe/model/model.h"

namespace onnxprobe {

// Element types of the model's tensors by name (graph inputs, initializers and node outputs, e.g.
// from one float32 run). A tensor absent here is treated as not float32.
using TensorTypes = std::unordered_map<std::string, DType>;

enum class Fp16Eligibility {
  kConvertible,    // at least one float32 input or output may become float16
  kNoFloat,        // reads and writes no float32 tensor that its schema lets be float16
  kCustomDomain,   // operator outside the ONNX domain: its types are unknown
  kUnknownSchema,  // no ONNX schema for this operator and opset
  kSubgraph,       // If/Loop/Scan-like bodies stay in float32
};
const char* Fp16EligibilityName(Fp16Eligibility e);  // "convertible", "custom domain", ...

// One entry per node of model.index().nodes() (topological order).
std::vector<Fp16Eligibility> Fp16EligibilityOf(const Model& model, const TensorTypes& types);

// A model running each of `nodes` (topological indices; each must be kConvertible) alone in
// float16: its float32 inputs are cast to float16 (float initializers converted), the node runs,
// its float16 outputs are cast back to float32. Storage barriers (below) keep the roundings.
// With `embed`, the model also runs the original graph and outputs every node output of it
// (`captured`), and the single nodes read those tensors: one run gives the float32 reference and
// the isolated results together.
struct Fp16IsolationModel {
  std::string bytes;
  std::vector<std::string> feeds;     // original tensor names it takes as graph inputs
  std::vector<std::string> captured;  // embed: the original node outputs it also outputs
  struct Output {
    std::string graph_output;  // name in the isolation model
    std::string tensor;        // the original tensor it reproduces
    int node = -1;             // topological index of the node
  };
  std::vector<Output> outputs;
  // The same nodes computed in float32 from the float16-rounded inputs, each float output rounded
  // to float16 once: what float16 storage alone costs each node (a kernel that accumulates in
  // float32 and rounds its result loses this much; one that loses more computes in float16).
  std::vector<Output> storage;
};
Expected<Fp16IsolationModel> BuildFp16IsolationModel(const Model& model,
                                                     const std::vector<int>& nodes,
                                                     const TensorTypes& types, bool embed = false);

// Element types of the model's tensors from ONNX shape inference (advisory: tensors it cannot
// type are absent; never fails).
TensorTypes InferTensorTypes(const Model& model);

// The model converted to float16 except the nodes in `keep_fp32` (topological indices) and the
// nodes that cannot be converted: float initializers read in float16 are converted (values
// beyond the float16 range clamped to +-65504), Casts are inserted where precisions meet, and
// graph inputs and outputs keep their types and names; external data is read in. Fails on a
// result over protobuf's 2 GB limit.
// With `storage_barriers`, every float16 tensor a node produces passes through two Identities (see
// kFp16StorageNote): for checking on a runtime that would otherwise skip the rounding.
Expected<std::string> ConvertToFp16(const Model& model, const std::set<int>& keep_fp32,
                                    const TensorTypes& types, bool storage_barriers = false);

// Why the barriers: ONNX Runtime's CPU provider runs a float16 node that has no float16 kernel in
// float32 between Casts it inserts, and removes a Cast to float16 followed by one back, so chains
// of such nodes (and single nodes between Casts) never round their activations to float16. Two
// Identities (which have float16 kernels) after each such node keep every float16 tensor
// rounded, as it is stored on a device with float16 kernels; the node itself still computes in
// float32. (One Identity is not enough: the runtime moves an fp16 node that sits alone between
// nodes it runs in float32 to float32 as well.) Optimization levels above "disabled" may remove
// Identities.

// The producer name ConvertToFp16 writes (the output guard recognizes converted models by it).
constexpr const char* kFp16ProducerName = "onnxprobe fp16";

}  // namespace onnxprobe
