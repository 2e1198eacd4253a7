// The `inspect` document of a model as JSON: what `onnxprobe inspect --json` prints and what the
// Python package's inspect() returns (one writer, so both agree by construction).
#pragma once

#include <string>

#include "onnxprobe/model/model.h"

namespace onnxprobe {

// Identity (file size, MD5, SHA-256), IR version, opsets, producer, inputs and outputs with
// their types, op counts, parameters, every initializer with its SHA-256, the checker's
// warnings, and with `with_tensors` every tensor in topological order. Fails when an
// initializer's data cannot be read (kIoError, kCorrupt naming the initializer).
Expected<std::string> InspectJson(const Model& model, bool with_tensors);

}  // namespace onnxprobe
