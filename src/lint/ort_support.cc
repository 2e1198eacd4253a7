#include "lint/ort_support.h"

#include <cstdio>
#include <vector>

namespace onnxprobe::lint {
namespace {

struct Row {
  int major, minor;
  OrtSupport support;
};

// Sources:
// - 1.0 to 1.20: ONNX Runtime's docs/reference/compatibility.md ("ONNX opset support" table:
//   ONNX opset version, ONNX ML opset version, ONNX IR version per release), except the ML opset
//   of the ONNX 1.16 releases (1.18-1.20): the table says 4, but 1.20.1 loads ai.onnx.ml 5.
// - measured with the bootstrap's libraries (a Relu model stamped with each version):
//   1.20.1 loads ai.onnx 21 / IR 10 / ai.onnx.ml 5 and refuses 22 / 11 / 6; 1.23.2 loads
//   ai.onnx 23 / IR 11 / ai.onnx.ml 5 and refuses 24 ("under development") / 12 ("Unsupported
//   model IR version") / 6; 1.32.0 loads ai.onnx 28 / IR 14 / ai.onnx.ml 5 and refuses 29 / 15 / 6.
// - 1.24 to 1.31: not measured, no row (a lookup says so rather than guess).
// - 1.21, 1.22: ONNX 1.17 (ai.onnx 22, IR 10, ai.onnx.ml 5) per their release notes; not
//   measured here.
// A model stamped newer than its row fails to load: the opset check by default (session option
// session.allow_released_opsets_only=1), the IR check always.
const std::vector<Row>& Rows() {
  static const std::vector<Row> kRows = {
      {1, 0, {"1.0", 11, 2, 6}},    {1, 1, {"1.1", 11, 2, 6}},    {1, 2, {"1.2", 11, 2, 6}},
      {1, 3, {"1.3", 12, 2, 7}},    {1, 4, {"1.4", 12, 2, 7}},    {1, 5, {"1.5", 12, 2, 7}},
      {1, 6, {"1.6", 13, 2, 7}},    {1, 7, {"1.7", 13, 2, 7}},    {1, 8, {"1.8", 14, 2, 7}},
      {1, 9, {"1.9", 15, 2, 8}},    {1, 10, {"1.10", 15, 2, 8}},  {1, 11, {"1.11", 16, 2, 8}},
      {1, 12, {"1.12", 17, 3, 8}},  {1, 13, {"1.13", 17, 3, 8}},  {1, 14, {"1.14", 18, 3, 8}},
      {1, 15, {"1.15", 19, 3, 8}},  {1, 16, {"1.16", 19, 3, 9}},  {1, 17, {"1.17", 20, 4, 9}},
      {1, 18, {"1.18", 21, 5, 10}}, {1, 19, {"1.19", 21, 5, 10}}, {1, 20, {"1.20", 21, 5, 10}},
      {1, 21, {"1.21", 22, 5, 10}}, {1, 22, {"1.22", 22, 5, 10}}, {1, 23, {"1.23", 23, 5, 11}},
      {1, 32, {"1.32", 28, 5, 14}},
  };
  return kRows;
}

}  // namespace

bool LookupOrtSupport(const std::string& version, OrtSupport* out) {
  int major = 0, minor = 0;
  if (std::sscanf(version.c_str(), "%d.%d", &major, &minor) != 2) return false;
  for (const Row& r : Rows()) {
    if (r.major == major && r.minor == minor) {
      *out = r.support;
      return true;
    }
  }
  return false;
}

const OrtSupport& NewestKnownOrt() { return Rows().back().support; }

}  // namespace onnxprobe::lint
