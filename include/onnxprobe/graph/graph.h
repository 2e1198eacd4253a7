// Graph surgery on a loaded Model. Each pass returns a new serialized model; the Model is
// unchanged.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "onnxprobe/model/model.h"

namespace onnxprobe {

// The model with `extra` tensors appended as graph outputs (existing outputs kept first; names
// already outputs are skipped). Fails naming a tensor that is not a main-graph node output.
Expected<std::string> MarkOutputs(const Model& model, const std::vector<std::string>& extra);

// The model with every initializer of more than `max_bytes` (0: none) that sessions read from a
// file (external data, and large embedded weights: see LoadMode::kFull) turned into a graph input
// of the same type and shape, its data never read; with `outputs` marked as graph outputs
// (MarkOutputs(model, outputs) when there is none). Fails like MarkOutputs.
Expected<std::string> LiftExternalInitializers(const Model& model, uint64_t max_bytes,
                                               const std::vector<std::string>& outputs = {});

// How a cut-out model holds the weights its nodes read.
enum class SubgraphWeights {
  kEmbedded,    // in the model: standalone, a file to write anywhere (a repro bundle's)
  kReferenced,  // those the model's sessions read from a file (external data, and large
                // embedded weights: LoadMode::kFull) stay references into it, resolved against
                // the model's folder: a model to run at once with that folder, and no copy of
                // each weight read, serialized and parsed again per run
};

// A float attribute of a main-graph node (`node`: topological index) and a value for it.
struct FloatAttributeValue {
  int node = -1;
  std::string name;
  float value = 0;
};

struct SubgraphSpec {
  std::vector<int> nodes;  // topological indices into model.index().nodes()
  std::vector<std::string> inputs;
  std::vector<std::pair<DType, Shape>> input_types;  // one per input
  std::vector<std::string> outputs;
  std::vector<std::pair<DType, Shape>> output_types;  // one per output; empty: untyped
  // (from, to): an Identity node making tensor `to` from `from`, for a tensor whose producer is
  // left out (e.g. a Cast round trip bypassed)
  std::vector<std::pair<std::string, std::string>> aliases;
  SubgraphWeights weights = SubgraphWeights::kEmbedded;
  // float attributes set to other values in the cut-out copy (a constant fit's trials)
  std::vector<FloatAttributeValue> float_attributes;
};

// A model running `nodes` with `inputs` as graph inputs and `outputs` as graph outputs: the
// initializers the nodes read held as `spec.weights` says, opsets and model-local functions kept.
// Fails naming a node input that is neither an input nor an initializer nor produced inside the
// set.
Expected<std::string> ExtractSubgraph(const Model& model, const SubgraphSpec& spec);

// `model_bytes` (a serialized model) with every main-graph initializer stored as external data
// read in from `model_dir`: a standalone model. Fails naming the initializer whose data cannot
// be read (see Model::Load for what a reference may not do), or kCorrupt when the bytes do not
// parse.
Expected<std::string> EmbedExternalData(const std::string& model_bytes,
                                        const std::string& model_dir);

// The model with If nodes of the main graph replaced by the nodes of the branch each takes:
// `taken` maps an If's first output to its condition (true: then_branch). The branch's nodes
// take the If's place in the file, its initializers and value info join the main graph's, and
// each branch output becomes the If's output through an Identity node named
// "<If name>/taken/<k>": every tensor the branch computes is then a main-graph tensor, captured,
// compared and isolated like any other. Ifs not in `taken` stay. Fails (kUnsupported) when a
// branch defines a name the main graph already has.
Expected<std::string> InlineIfBranches(const Model& model,
                                       const std::map<std::string, bool>& taken);

// The model with Loop and Scan nodes of the main graph replaced by their body, copied once per
// iteration: `iterations` maps a node's first output to how many times it runs on the inputs at
// hand. Every name the body defines gets "@<iteration>" in a copy (tensor "h_new@3", node
// "tanh@3"; the runtime wants node names unique), a Loop's iteration
// number and condition become constants, a Scan's slices Gathers of its inputs, the final states
// the node's outputs through Identity nodes and the scan outputs Unsqueeze + Concat of the
// slices (in the directions the node's attributes give): each iteration's tensors are then
// main-graph tensors, captured, compared and isolated like any other. The body's own
// initializers are added once. Nodes not in `iterations` (or with 0 iterations) stay.
Expected<std::string> UnrollLoops(const Model& model,
                                  const std::map<std::string, int64_t>& iterations);

// How to count the iterations of each Loop and Scan of the main graph on given inputs: the
// length of `tensor` along `axis` (a Scan's first scan input; a Loop's first scan output, axis
// 0), or its value (`trip_count`: a Loop without a condition); `known` when `tensor` is a weight
// (else -1); `why_not` when a Loop's count cannot be told from a tensor.
struct LoopCount {
  std::string node, first_output;
  std::string tensor;
  int64_t axis = 0;
  bool trip_count = false;
  int64_t known = -1;
  size_t body_nodes = 0;
  std::string why_not;
};
std::vector<LoopCount> CountableLoops(const Model& model);

// An integer attribute of a main-graph node (`def` when it is absent or not an integer).
int64_t NodeIntAttribute(const Model& model, const NodeInfo& node, const std::string& name,
                         int64_t def);

// The float (FLOAT-typed) attributes of a main-graph node, by name, in the file's order.
std::vector<std::pair<std::string, float>> NodeFloatAttributes(const Model& model,
                                                               const NodeInfo& node);

// A string attribute of a main-graph node ("" when it is absent or not a string).
std::string NodeStringAttribute(const Model& model, const NodeInfo& node, const std::string& name);

}  // namespace onnxprobe
