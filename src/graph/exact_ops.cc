// The ops onnxprobe computes in float64 with its own kernels (graph/exact.h): read by the graph
// pass that builds the exact model and by the kernels' registration, also in a platform worker
// (which holds no graph code), so the list stands alone.
#include "onnxprobe/graph/exact.h"

namespace onnxprobe {

const std::set<std::string>& OwnExactKernelOps() {
  static const std::set<std::string> kOps = {"Acos",
                                             "Acosh",
                                             "Asin",
                                             "Asinh",
                                             "Atan",
                                             "Atanh",
                                             "AveragePool",
                                             "Celu",
                                             "ConvTranspose",
                                             "Cosh",
                                             "Elu",
                                             "Erf",
                                             "Gelu",
                                             "GlobalAveragePool",
                                             "GlobalMaxPool",
                                             "HardSigmoid",
                                             "HardSwish",
                                             "InstanceNormalization",
                                             "Mish",
                                             "Selu",
                                             "Sinh",
                                             "Softplus",
                                             "Softsign",
                                             "Tan",
                                             "ThresholdedRelu"};
  return kOps;
}

}  // namespace onnxprobe
