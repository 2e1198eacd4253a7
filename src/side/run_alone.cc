#include "onnxprobe/side/run_alone.h"

namespace onnxprobe {

Expected<std::vector<RunOutput>> RunAlone(
    Side& side, const Model& model, const SubgraphSpec& spec,
    const std::vector<std::pair<std::string, const Tensor*>>& feed, std::string* model_bytes) {
  // a run on the spot: no copy of each weight read, serialized and parsed again
  SubgraphSpec referenced = spec;
  referenced.weights = SubgraphWeights::kReferenced;
  OP_ASSIGN_OR_RETURN(std::string bytes, ExtractSubgraph(model, referenced));
  auto got = side.RunOther(bytes, model.dir(), feed, spec.outputs);
  if (model_bytes != nullptr) *model_bytes = std::move(bytes);
  if (!got.ok()) return got.status();
  if (got->size() != spec.outputs.size()) {
    return BackendError("running '" + (spec.outputs.empty() ? std::string() : spec.outputs[0]) +
                        "' alone gave " + std::to_string(got->size()) + " outputs, expected " +
                        std::to_string(spec.outputs.size()));
  }
  return got;
}

}  // namespace onnxprobe
