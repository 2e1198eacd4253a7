// Graph surgery on a loaded Model. Each pass returns a new serialized model; the Model is unchanged.
#pragma once

#include <string>
#include <vector>

#include "onnxprobe/model.h"

namespace onnxprobe {

// The model with `extra` tensors appended as graph outputs (existing outputs kept first; names
// already outputs are skipped). Fails naming a tensor that is not a main-graph node output.
Expected<std::string> MarkOutputs(const Model& model, const std::vector<std::string>& extra);

}  // namespace onnxprobe
