// Internal: the quantization section of a comparison report (console text and JSON), rendered
// only when the comparison was float vs quantized (CompareReport::quant.active()).
#pragma once

#include <string>

#include "onnxprobe/common/json.h"
#include "onnxprobe/quant/quant.h"

namespace onnxprobe {

std::string QuantConsoleSection(const QuantReport& q, size_t max_layers);
// The "quantization" object (docs/report-json.md).
void QuantJson(JsonWriter& j, const QuantReport& q);

}  // namespace onnxprobe
