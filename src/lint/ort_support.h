// Internal: the newest ONNX opsets and IR version each ONNX Runtime release accepts.
#pragma once

#include <string>

namespace onnxprobe::lint {

struct OrtSupport {
  std::string release;  // "1.23" (major.minor of the table row)
  int onnx_opset = 0;   // newest ai.onnx opset it loads
  int ml_opset = 0;     // newest ai.onnx.ml opset; 0 when the row does not say
  int ir_version = 0;   // newest IR version it loads
};

// The row for `version` ("1.23.2", "1.20"); false when the version does not parse or is newer
// than the newest row (nothing is known about it).
bool LookupOrtSupport(const std::string& version, OrtSupport* out);
// The newest row of the table.
const OrtSupport& NewestKnownOrt();

}  // namespace onnxprobe::lint
