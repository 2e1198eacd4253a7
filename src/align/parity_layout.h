// Internal: the layouts in which an exporter keeps a parameter under another name. The same
// bytes (a rename, a reshape, a private copy of a shared weight) or, for a matrix, transposed (a
// Linear's weight constant-folded into a MatMul operand, `onnx::MatMul_N`).
#pragma once

#include <vector>

#include "onnxprobe/tensor/tensor.h"

namespace onnxprobe {
namespace align {

enum class KeptAs { kSameOrder, kTransposed };

// The layouts in which an initializer of `init_dims` can hold a parameter of `param` shape: the
// same element count in the same order; transposed when both are matrices with reversed dims
// (a square matrix can be either).
std::vector<KeptAs> Layouts(const Shape& param, const std::vector<int64_t>& init_dims);

// The parameter's values in that layout (a transposed copy, or a view of the same bytes).
Expected<Tensor> InLayout(const Tensor& param, KeptAs how);

}  // namespace align
}  // namespace onnxprobe
