// Internal: what the stages of AnalyzeFp16 share (the float32 run's tensors and the report).
#pragma once

#include <memory>
#include <set>
#include <string>
#include <unordered_map>

#include "onnxprobe/fp16/fp16.h"

namespace onnxprobe {

struct Fp16Context {
  const Fp16Request& req;
  const Model& model;
  Backend& backend;
  TensorTypes types;
  // float32 values by tensor name: graph inputs and every captured node output (not owned).
  std::unordered_map<std::string, const Tensor*> values;
  std::vector<Fp16Eligibility> eligibility;  // per topological node
  std::set<int> keep;                        // requested by name
  Fp16Report* report;

  // The absolute tolerance of graph output `name` (Fp16Request::atol_scale).
  double OutputAtol(const std::string& name) const {
    for (const auto& [n, a] : report->output_atol) {
      if (n == name) return a;
    }
    return req.atol;
  }

  std::vector<std::pair<std::string, const Tensor*>> Feed(const std::vector<std::string>& names,
                                                          std::string* missing) const {
    std::vector<std::pair<std::string, const Tensor*>> feed;
    for (const auto& n : names) {
      auto it = values.find(n);
      if (it == values.end()) {
        *missing = n;
        return {};
      }
      feed.emplace_back(n, it->second);
    }
    return feed;
  }
};

// Runs every convertible node alone in float16, batched into as few runs as the memory budget
// allows; fills the isolation fields of report->nodes (indexed by topological position).
Status IsolateNodes(Fp16Context& cx);

// The float32 run and the isolation in one: the original graph plus every node's float16 copy,
// planned with types from shape inference. `ok` false: not possible here (types unknown, too
// large, or the runtime rejects a copy); the caller runs the two steps apart.
struct EmbeddedRun {
  bool ok = false;
  Fp16IsolationModel iso;
  TensorTypes inferred;
  std::vector<RunOutput> outputs;  // iso.captured, then iso.outputs
};
EmbeddedRun RunEmbedded(Fp16Context& cx, const std::vector<NamedTensor>& inputs);
// Records the embedded run's isolated results when the types it was planned with are the types
// the run produced for every tensor a node reads or writes; false otherwise (nothing recorded).
bool RecordEmbedded(Fp16Context& cx, const EmbeddedRun& run);

// Builds the block list: requested nodes, nodes the runtime rejects, overflowing nodes, then
// the ranked rest until the converted model passes. Writes the model when asked and passed.
Status SearchBlockList(Fp16Context& cx);

}  // namespace onnxprobe
