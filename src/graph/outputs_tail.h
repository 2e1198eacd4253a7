// Extra graph outputs as a serialized ModelProto{graph{output...}}: appended to a model's bytes,
// protobuf merges it into the graph (see MarkOutputs).
#pragma once

#include <string>
#include <vector>

#include "onnxprobe/model/model.h"

namespace onnxprobe {

// Fails like MarkOutputs, naming a tensor that is not a main-graph node output.
Expected<std::string> OutputsTail(const Model& model, const std::vector<std::string>& extra);

}  // namespace onnxprobe
