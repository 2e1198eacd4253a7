// Internal: onnxprobe's float64 kernels as custom ops of a loaded runtime (exact_kernels.cc).
#pragma once

#include "backend/ort/ort_api.h"

namespace onnxprobe {

// Adds the domain of onnxprobe's float64 kernels (graph/exact.h, OwnExactKernelOps) to `so`.
Status AddExactKernels(const OrtApi* api, OrtSessionOptions* so);

}  // namespace onnxprobe
