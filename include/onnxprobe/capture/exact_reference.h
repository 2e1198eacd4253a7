// The exact reference of a model, ready to run: its float64 copy (graph/exact.h) with the nodes
// the runtime at hand refuses in float64 moved to float32, and the session options it runs with.
#pragma once

#include <functional>
#include <string>

#include "onnxprobe/backend/backend.h"
#include "onnxprobe/graph/exact.h"
#include "onnxprobe/model/model.h"

namespace onnxprobe {

struct ExactReference {
  Model model;             // the float64 model (paths and hashes are the original's)
  ExactModel built;        // how each node is computed (`bytes` left empty)
  SessionOptions session;  // CPU, optimizations disabled, onnxprobe's float64 kernels
};

// Builds `model`'s float64 copy and opens one session of it on `backend`: a node the runtime has
// no float64 kernel for (its "Could not find an implementation for <op> node with name '<n>'")
// then runs in float32 and is named as such, and the copy is built again. Fails like
// BuildExactModel, or with the runtime's error when the session fails otherwise.
Expected<ExactReference> PrepareExactReference(const Model& model, Backend& backend);

// The same, each attempt's session made by `open` (which keeps the one that opens): for a
// runtime that runs in another process (--isolate-runtime). `open`'s error must carry the
// runtime's message.
using ExactOpener = std::function<Status(const Model& exact_model, const SessionOptions& session)>;
Expected<ExactReference> PrepareExactReference(const Model& model, const ExactOpener& open);

// One line per node computed in float32 (not exact), at most `limit` of them, then a count.
std::vector<std::string> DescribeInexactNodes(const ExactModel& m, size_t limit = 8);

}  // namespace onnxprobe
