// Aligning PyTorch module outputs with ONNX tensors, using the scope names the torch exporter
// gives nodes ("/layer1/layer1.0/conv1/Conv" -> module layer1.0.conv1), what the exporter
// changes (BatchNorm folded into the preceding Conv, modules with no nodes, repeated calls,
// tuple outputs), and a value-based fallback that is always reported with its confidence.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "onnxprobe/model.h"
#include "onnxprobe/side.h"

namespace onnxprobe {

struct AlignmentRow {
  std::string torch_name;  // the capture's tensor name (module path, _k for repeated calls)
  std::string module, module_type;
  int call_index = 0, output_index = 0;
  std::string onnx_tensor;  // "" when there is no counterpart
  // "scope", "container" (last node of the module's subtree), "bn-folded" (BatchNorm folded into
  // the preceding Conv), "value" (best cosine among same-size candidates), or "none"
  std::string method;
  double confidence = 0;  // 1 for name-based matches; the cosine similarity for "value"
  std::string note;       // why there is no counterpart, or what the exporter changed
};

struct Alignment {
  std::vector<AlignmentRow> rows;
  std::map<std::string, std::string> rename;  // torch name -> ONNX tensor
};

// The module path of a torch-exported node name; "" when the name carries no scope.
// `call` receives the call index of the last component ("relu_2" -> 2) when `modules` knows
// "relu" but not "relu_2".
std::string ScopeModulePath(const std::string& node_name, const std::vector<std::string>& modules,
                            int* call);

// Aligns a PyTorch capture (side tensors with module metadata) with an ONNX model by names.
Alignment AlignByScope(const std::vector<SideTensor>& torch_tensors, const Model& onnx);

// Value-based fallback for rows without a counterpart: compares each with the ONNX tensors of
// the same size near its expected position (one extra run of `onnx_side`), keeps the best
// cosine similarity >= min_cosine. Fills method "value" and the confidence.
Status AlignByValue(Side& torch_side, Side& onnx_side, Alignment* alignment,
                    double min_cosine = 0.999);

}  // namespace onnxprobe
