// Internal: what quant/ reads from a model beyond the graph index (constant values, node
// attributes). The .cc is the only file of quant/ that sees protobuf.
#pragma once

#include <string>

#include "onnxprobe/model/model.h"
#include "onnxprobe/quant/quant.h"

namespace onnxprobe::quant {

bool IsConstant(const Model& m, const std::string& name);
// An integer attribute of node `n` (topological index), or `def`.
int64_t IntAttr(const Model& m, int n, const std::string& attr, int64_t def);
// Quantization parameters from a scale tensor and an optional zero point tensor ("" = none,
// then the type is `def_type`). Fails naming the tensors when they cannot be read.
Expected<QuantParams> ReadParams(const Model& m, const std::string& scale, const std::string& zp,
                                 int axis, DType def_type = DType::kUInt8);

// The quantization of a B tensor, when it has one (*has): a QuantizeLinear's or
// DequantizeLinear's parameters, or a QLinear op's output parameters (quant_pairing.cc).
Expected<QuantParams> ParamsOfTensor(const Model& b, const std::string& t, bool* has);
// True when the tensor is held quantized (a QuantizeLinear or QLinear op's output).
bool IsQuantizedTensor(const Model& b, const std::string& t);

}  // namespace onnxprobe::quant
