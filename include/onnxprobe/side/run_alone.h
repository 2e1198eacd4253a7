// One way to run a node or subgraph alone, used by localization (a node or the smallest subgraph
// around it, and the bypass check), the quantized layers' isolation and a PyTorch module call's
// isolation. The result is judged by the comparison's one rule (JudgeRow, engine/comparison.h),
// or, for quantized layers, by their SQNR against the float model.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "onnxprobe/graph/graph.h"
#include "onnxprobe/side/side.h"

namespace onnxprobe {

// The nodes of `spec` cut out of `model` (ExtractSubgraph: opsets and local functions kept, the
// weights the model's sessions read from its files referenced there, whatever spec.weights says)
// and run on `side`'s runtime with its provider, settings and custom ops, fed `feed`; returns
// spec.outputs in order. When `model_bytes` is given it receives the cut-out model, also when the
// run fails: it runs with model.dir() as its folder (EmbedExternalData makes it standalone, as a
// repro bundle needs). Fails with the cut's error (naming the node input it cannot feed) or the
// runtime's.
Expected<std::vector<RunOutput>> RunAlone(
    Side& side, const Model& model, const SubgraphSpec& spec,
    const std::vector<std::pair<std::string, const Tensor*>>& feed,
    std::string* model_bytes = nullptr);

}  // namespace onnxprobe
