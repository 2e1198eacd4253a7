// AveragePool in float64 (exact_pool.h).
#include "backend/ort/exact_pool.h"

#include <algorithm>

namespace onnxprobe {

std::vector<int64_t> PoolOutputSizes(const PoolAttributes& a, const std::vector<int64_t>& in,
                                     std::vector<int64_t>* pads) {
  const size_t r = in.size();
  if (a.kernel.size() != r) return {};
  std::vector<int64_t> s = a.strides.empty() ? std::vector<int64_t>(r, 1) : a.strides;
  std::vector<int64_t> d = a.dilations.empty() ? std::vector<int64_t>(r, 1) : a.dilations;
  *pads = a.pads.empty() ? std::vector<int64_t>(2 * r, 0) : a.pads;
  if (s.size() != r || d.size() != r || pads->size() != 2 * r) return {};
  std::vector<int64_t> out(r);
  for (size_t j = 0; j < r; ++j) {
    if (s[j] < 1 || d[j] < 1 || a.kernel[j] < 1) return {};
    const int64_t span = (a.kernel[j] - 1) * d[j] + 1;
    if (a.auto_pad == "VALID") {
      (*pads)[j] = (*pads)[r + j] = 0;
    } else if (a.auto_pad == "SAME_UPPER" || a.auto_pad == "SAME_LOWER") {
      int64_t o = (in[j] + s[j] - 1) / s[j];
      int64_t total = std::max<int64_t>((o - 1) * s[j] + span - in[j], 0);
      (*pads)[j] = a.auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      (*pads)[r + j] = total - (*pads)[j];
      out[j] = o;
      continue;
    }
    int64_t room = in[j] + (*pads)[j] + (*pads)[r + j] - span;
    if (room < 0) return {};
    int64_t o = (a.ceil_mode ? (room + s[j] - 1) / s[j] : room / s[j]) + 1;
    // a last window that would start past the input and its leading pad is dropped
    if (a.ceil_mode && (o - 1) * s[j] >= in[j] + (*pads)[j]) --o;
    out[j] = o;
  }
  return out;
}

void AveragePool64(const PoolAttributes& a, const double* x, const std::vector<int64_t>& x_dims,
                   const std::vector<int64_t>& out_sizes, const std::vector<int64_t>& pads,
                   double* y) {
  const size_t r = out_sizes.size();
  std::vector<int64_t> in(x_dims.begin() + 2, x_dims.end());
  std::vector<int64_t> s = a.strides.empty() ? std::vector<int64_t>(r, 1) : a.strides;
  std::vector<int64_t> d = a.dilations.empty() ? std::vector<int64_t>(r, 1) : a.dilations;
  int64_t plane_in = 1, plane_out = 1, window = 1;
  for (size_t j = 0; j < r; ++j) {
    plane_in *= in[j];
    plane_out *= out_sizes[j];
    window *= a.kernel[j];
  }
  const int64_t planes = x_dims[0] * x_dims[1];
  std::vector<int64_t> o(r), k(r);
  for (int64_t p = 0; p < planes; ++p) {
    const double* xp = x + p * plane_in;
    double* yp = y + p * plane_out;
    std::fill(o.begin(), o.end(), 0);
    for (int64_t oi = 0; oi < plane_out; ++oi) {
      double sum = 0;
      int64_t inside = 0, padded = 0;
      std::fill(k.begin(), k.end(), 0);
      for (int64_t w = 0; w < window; ++w) {
        bool in_input = true, in_padded = true;
        int64_t at = 0;
        for (size_t j = 0; j < r; ++j) {
          int64_t pos = o[j] * s[j] - pads[j] + k[j] * d[j];
          in_input = in_input && pos >= 0 && pos < in[j];
          in_padded = in_padded && pos >= -pads[j] && pos < in[j] + pads[r + j];
          at = at * in[j] + pos;
        }
        if (in_input) {
          sum += xp[at];
          ++inside;
        }
        padded += in_padded;
        for (size_t j = r; j-- > 0;) {  // next window position, row-major
          if (++k[j] < a.kernel[j]) break;
          k[j] = 0;
        }
      }
      int64_t count = a.count_include_pad ? padded : inside;
      yp[oi] = count > 0 ? sum / static_cast<double>(count) : 0.0;
      for (size_t j = r; j-- > 0;) {
        if (++o[j] < out_sizes[j]) break;
        o[j] = 0;
      }
    }
  }
}

}  // namespace onnxprobe
