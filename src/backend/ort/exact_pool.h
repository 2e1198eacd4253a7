// Internal: AveragePool in float64, one of onnxprobe's own kernels (exact_kernels.cc).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace onnxprobe {

struct PoolAttributes {
  std::vector<int64_t> kernel, strides, pads, dilations;  // pads: begins then ends
  std::string auto_pad = "NOTSET";
  bool ceil_mode = false, count_include_pad = false;
};

// The output's spatial sizes and the pads actually used for input spatial sizes `in` (the ONNX
// definition: floor or ceil, a last window starting past the padded input dropped, SAME pads
// from the output size). Empty when the attributes do not fit the input's rank.
std::vector<int64_t> PoolOutputSizes(const PoolAttributes& a, const std::vector<int64_t>& in,
                                     std::vector<int64_t>* pads);

// y[n, c, o...] = the mean of x over the window of o (positions inside the input; with
// count_include_pad also the padded ones, inside the padded extent, count as zeros).
void AveragePool64(const PoolAttributes& a, const double* x, const std::vector<int64_t>& x_dims,
                   const std::vector<int64_t>& out_sizes, const std::vector<int64_t>& pads,
                   double* y);

}  // namespace onnxprobe

namespace onnxprobe {

struct ConvTransposeAttributes {
  std::vector<int64_t> strides, pads, dilations, output_padding;  // pads: begins then ends
  int64_t group = 1;
};

// ConvTranspose in float64 (auto_pad NOTSET or VALID, no output_shape: BuildExactModel sends the
// others to float32): x [N, C, in...], w [C, M/G, k...], b [M] or null; the output's spatial
// sizes (in - 1) * s + output_padding + (k - 1) * d + 1 - pads. Empty when the attributes do not
// fit the shapes; else fills `y` (sized by the caller from the returned dims).
std::vector<int64_t> ConvTransposeDims(const ConvTransposeAttributes& a,
                                       const std::vector<int64_t>& x_dims,
                                       const std::vector<int64_t>& w_dims);
void ConvTranspose64(const ConvTransposeAttributes& a, const double* x,
                     const std::vector<int64_t>& x_dims, const double* w,
                     const std::vector<int64_t>& w_dims, const double* b,
                     const std::vector<int64_t>& y_dims, double* y);

}  // namespace onnxprobe
