#include "align/parity_layout.h"

#include <cstring>

namespace onnxprobe {
namespace align {

std::vector<KeptAs> Layouts(const Shape& param, const std::vector<int64_t>& init_dims) {
  std::vector<KeptAs> out;
  uint64_t a = 1, b = 1;
  for (int64_t d : param) a *= static_cast<uint64_t>(d < 0 ? 0 : d);
  for (int64_t d : init_dims) b *= static_cast<uint64_t>(d < 0 ? 0 : d);
  if (a != b || a < 2) return out;
  out.push_back(KeptAs::kSameOrder);
  if (param.size() == 2 && init_dims.size() == 2 && param[0] == init_dims[1] &&
      param[1] == init_dims[0] && param[0] > 1 && param[1] > 1)
    out.push_back(KeptAs::kTransposed);
  return out;
}

Expected<Tensor> InLayout(const Tensor& param, KeptAs how) {
  if (how == KeptAs::kSameOrder) return param;
  if (param.shape().size() != 2) return InvalidArgument("only a matrix is kept transposed");
  const int64_t rows = param.shape()[0], cols = param.shape()[1];
  OP_ASSIGN_OR_RETURN(Tensor t, Tensor::Allocate(param.dtype(), {cols, rows}));
  const size_t size = DTypeSize(param.dtype());
  const auto* src = static_cast<const uint8_t*>(param.data());
  auto* dst = static_cast<uint8_t*>(t.data());
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c)
      std::memcpy(dst + (c * rows + r) * size, src + (r * cols + c) * size, size);
  }
  return t;
}

}  // namespace align
}  // namespace onnxprobe
