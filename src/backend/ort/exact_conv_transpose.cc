// ConvTranspose in float64 (exact_pool.h): every input element scattered through the kernel.
#include <algorithm>

#include "backend/ort/exact_pool.h"

namespace onnxprobe {
namespace {

std::vector<int64_t> OrOnes(const std::vector<int64_t>& v, size_t r, int64_t fill) {
  return v.empty() ? std::vector<int64_t>(r, fill) : v;
}

}  // namespace

std::vector<int64_t> ConvTransposeDims(const ConvTransposeAttributes& a,
                                       const std::vector<int64_t>& x_dims,
                                       const std::vector<int64_t>& w_dims) {
  if (x_dims.size() < 3 || w_dims.size() != x_dims.size() || a.group < 1) return {};
  const size_t r = x_dims.size() - 2;
  auto s = OrOnes(a.strides, r, 1), d = OrOnes(a.dilations, r, 1);
  auto op = OrOnes(a.output_padding, r, 0), pads = OrOnes(a.pads, 2 * r, 0);
  if (s.size() != r || d.size() != r || op.size() != r || pads.size() != 2 * r) return {};
  if (x_dims[1] != w_dims[0] || x_dims[1] % a.group != 0) return {};
  std::vector<int64_t> y = {x_dims[0], w_dims[1] * a.group};
  for (size_t j = 0; j < r; ++j) {
    int64_t o =
        (x_dims[2 + j] - 1) * s[j] + op[j] + (w_dims[2 + j] - 1) * d[j] + 1 - pads[j] - pads[r + j];
    if (o < 1) return {};
    y.push_back(o);
  }
  return y;
}

void ConvTranspose64(const ConvTransposeAttributes& a, const double* x,
                     const std::vector<int64_t>& x_dims, const double* w,
                     const std::vector<int64_t>& w_dims, const double* b,
                     const std::vector<int64_t>& y_dims, double* y) {
  const size_t r = x_dims.size() - 2;
  auto s = OrOnes(a.strides, r, 1), d = OrOnes(a.dilations, r, 1);
  auto pads = OrOnes(a.pads, 2 * r, 0);
  int64_t in_plane = 1, out_plane = 1, window = 1;
  for (size_t j = 0; j < r; ++j) {
    in_plane *= x_dims[2 + j];
    out_plane *= y_dims[2 + j];
    window *= w_dims[2 + j];
  }
  const int64_t n = x_dims[0], c = x_dims[1], cg = c / a.group, mg = w_dims[1], m = y_dims[1];
  std::fill(y, y + n * m * out_plane, 0.0);
  std::vector<int64_t> i(r), k(r);
  for (int64_t b0 = 0; b0 < n; ++b0) {
    for (int64_t ci = 0; ci < c; ++ci) {
      const int64_t g = ci / cg;
      const double* xp = x + (b0 * c + ci) * in_plane;
      std::fill(i.begin(), i.end(), 0);
      for (int64_t ii = 0; ii < in_plane; ++ii) {
        const double xv = xp[ii];
        std::fill(k.begin(), k.end(), 0);
        for (int64_t kk = 0; kk < window; ++kk) {
          bool inside = true;
          int64_t at = 0;
          for (size_t j = 0; j < r; ++j) {
            int64_t o = i[j] * s[j] - pads[j] + k[j] * d[j];
            inside = inside && o >= 0 && o < y_dims[2 + j];
            at = at * y_dims[2 + j] + o;
          }
          if (inside) {
            for (int64_t mi = 0; mi < mg; ++mi) {
              double wv = w[(ci * mg + mi) * window + kk];
              y[(b0 * m + g * mg + mi) * out_plane + at] += xv * wv;
            }
          }
          for (size_t j = r; j-- > 0;) {
            if (++k[j] < w_dims[2 + j]) break;
            k[j] = 0;
          }
        }
        for (size_t j = r; j-- > 0;) {
          if (++i[j] < x_dims[2 + j]) break;
          i[j] = 0;
        }
      }
    }
  }
  if (b == nullptr) return;
  for (int64_t b0 = 0; b0 < n; ++b0)
    for (int64_t mi = 0; mi < m; ++mi)
      for (int64_t p = 0; p < out_plane; ++p) y[(b0 * m + mi) * out_plane + p] += b[mi];
}

}  // namespace onnxprobe
