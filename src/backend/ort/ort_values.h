// Internal: non-tensor outputs (sequences, maps) as one tensor, so they compare by value.
#pragma once

#include <string>

#include "backend/ort/ort_api.h"
#include "onnxprobe/tensor/tensor.h"

namespace onnxprobe {

// A map's values in key order (numeric keys sorted); a sequence of maps (ZipMap: one map of
// class scores per row) as [rows, keys]; a sequence of tensors as [elements, values] when every
// element holds as many values, else their values one after another. Values keep their dtype
// when it is float32, int64 or int32, else become float64. Fails (kUnsupported, naming `what`)
// for string values, optional or opaque values and sequences mixing element types.
Expected<Tensor> FlattenValue(const OrtApi* api, OrtValue* v, const std::string& what);

}  // namespace onnxprobe
