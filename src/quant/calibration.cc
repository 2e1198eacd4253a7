// A float tensor through side B's quantization and through the ranges MinMax, Percentile and
// Entropy calibration would choose from the same values (MeasureTensorQuantization, quant.h).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "onnxprobe/quant/quant.h"
#include "quant/quant_metrics.h"

namespace onnxprobe {
namespace {

constexpr int kHistogramBins = 2048;    // as ONNX Runtime's and TensorRT's entropy calibrators
constexpr int kQuantLevels = 128;       // levels on one side of zero (8-bit)
constexpr double kPercentile = 99.999;  // ONNX Runtime's default for Percentile calibration

// Per-tensor parameters of B's type for the real range [lo, hi] (zero included): symmetric
// (zero point 0) when B's is, else asymmetric over [qmin, qmax].
QuantParams ForRange(const QuantParams& b, double lo, double hi) {
  QuantParams p;
  p.qtype = b.qtype;
  p.qmin = b.qmin;
  p.qmax = b.qmax;
  lo = std::min(lo, 0.0);
  hi = std::max(hi, 0.0);
  bool symmetric = !b.zero_point.empty() && b.zero_point[0] == 0 && b.qmin < 0;
  double scale;
  int64_t zp = 0;
  if (symmetric) {
    scale = std::max(std::fabs(lo), std::fabs(hi)) / static_cast<double>(b.qmax);
  } else {
    scale = (hi - lo) / static_cast<double>(b.qmax - b.qmin);
    if (scale > 0) zp = b.qmin + std::llround(-lo / scale);
    zp = std::min(std::max(zp, b.qmin), b.qmax);
  }
  if (!(scale > 0) || !std::isfinite(scale)) scale = 1;
  p.scale = {scale};
  p.zero_point = {zp};
  return p;
}

double SqnrThrough(const Tensor& a, const QuantParams& p) {
  auto q = Quantize(a, p);
  if (!q.ok()) return NAN;
  auto back = Dequantize(*q, p);
  if (!back.ok()) return NAN;
  return quant::MeasureRow(a, *back, &p).sqnr_db;
}

// The |x| threshold whose 128-level quantization of the histogram loses the least information
// (smallest KL divergence from the clipped reference distribution).
double EntropyThreshold(const std::vector<double>& mags, double max_mag) {
  if (!(max_mag > 0)) return 0;
  std::vector<double> hist(kHistogramBins, 0);
  double width = max_mag / kHistogramBins;
  if (!(width > 0)) return max_mag;  // magnitudes too small to bin
  for (double m : mags) hist[std::min(kHistogramBins - 1, static_cast<int>(m / width))] += 1;
  double best_kl = std::numeric_limits<double>::infinity();
  int best = kHistogramBins;
  for (int i = kQuantLevels; i <= kHistogramBins; i += 16) {
    std::vector<double> p(hist.begin(), hist.begin() + i);
    for (int k = i; k < kHistogramBins; ++k) p[i - 1] += hist[k];  // outliers into the last bin
    // q: p merged into kQuantLevels levels, spread back over the nonzero bins of each level
    std::vector<double> q(i, 0);
    double per = static_cast<double>(i) / kQuantLevels;
    for (int lvl = 0; lvl < kQuantLevels; ++lvl) {
      int from = static_cast<int>(std::floor(lvl * per)),
          to = static_cast<int>(std::floor((lvl + 1) * per));
      to = std::min(std::max(to, from + 1), i);
      double sum = 0;
      int nonzero = 0;
      for (int k = from; k < to; ++k) {
        sum += hist[k];
        nonzero += hist[k] > 0;
      }
      for (int k = from; k < to; ++k) q[k] = hist[k] > 0 ? sum / nonzero : 0;
    }
    double ps = 0, qs = 0;
    for (int k = 0; k < i; ++k) ps += p[k], qs += q[k];
    if (!(ps > 0) || !(qs > 0)) continue;
    double kl = 0;
    for (int k = 0; k < i; ++k) {
      if (p[k] <= 0) continue;
      double pk = p[k] / ps, qk = q[k] / qs;
      kl += qk > 0 ? pk * std::log(pk / qk) : pk * 30;  // a value q cannot represent
    }
    if (kl < best_kl) best_kl = kl, best = i;
  }
  return (best + 0.5) * width;
}

}  // namespace

TensorQuantization MeasureTensorQuantization(const Tensor& a, const QuantParams& b) {
  TensorQuantization r;
  if (b.scale.empty() || a.empty()) return r;
  std::vector<double> mags;
  mags.reserve(a.num_elements());
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (uint64_t i = 0; i < a.num_elements(); ++i) {
    double v = ElementAsDouble(a, i);
    if (!std::isfinite(v)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    mags.push_back(std::fabs(v));
  }
  if (mags.empty()) return r;
  r.measured = true;
  r.lo_a = lo;
  r.hi_a = hi;
  // the narrowest range B represents over its channels
  r.lo_b = -std::numeric_limits<double>::infinity();
  r.hi_b = std::numeric_limits<double>::infinity();
  for (size_t c = 0; c < b.scale.size(); ++c) {
    double zp = b.zero_point.size() > c ? static_cast<double>(b.zero_point[c]) : 0.0;
    r.lo_b = std::max(r.lo_b, (static_cast<double>(b.qmin) - zp) * b.scale[c]);
    r.hi_b = std::min(r.hi_b, (static_cast<double>(b.qmax) - zp) * b.scale[c]);
  }
  auto qm = quant::MeasureRow(a, a, &b);  // saturation is measured on A's values alone
  r.saturated = qm.saturated;
  r.sqnr_db = SqnrThrough(a, b);
  r.minmax_db = SqnrThrough(a, ForRange(b, lo, hi));
  double max_mag = std::max(std::fabs(lo), std::fabs(hi));
  std::vector<double> sorted = mags;
  size_t k = static_cast<size_t>(std::ceil(kPercentile / 100 * (sorted.size() - 1)));
  std::nth_element(sorted.begin(), sorted.begin() + k, sorted.end());
  double pct = sorted[k];
  r.percentile_db = SqnrThrough(a, ForRange(b, std::max(lo, -pct), std::min(hi, pct)));
  double t = EntropyThreshold(mags, max_mag);
  r.entropy_db = SqnrThrough(a, ForRange(b, std::max(lo, -t), std::min(hi, t)));
  return r;
}

}  // namespace onnxprobe
