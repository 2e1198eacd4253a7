// The comparison kernel: one pass over both tensors in chunks, split across threads (float32:
// SumChunkF32, every sum of a chunk in one loop; other dtypes: chunks converted to double and
// OpenMP SIMD reductions); NaN/Inf handled on a slow path only in chunks that hold them.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <thread>
#include <type_traits>

#include "compare/chunk_f32.h"
#include "onnxprobe/compare/compare.h"

namespace onnxprobe {
namespace {

constexpr size_t kChunk = 1024;
constexpr int kBins = kHistBins;
// Below this many elements the histograms see every element and p99 is exact (a second pass
// over the one or two bins that hold it, +35% on the kernel); beyond, the upper edge of its bin.
constexpr uint64_t kExactBelow = uint64_t(1) << 17;

// 2^(j/8), j = 0..8, correctly rounded: the bin edges inside one octave
static_assert(kHistPerOctave == 8, "kOctaveEdges holds 8 bins per octave");
constexpr double kOctaveEdges[kHistPerOctave + 1] = {
    0x1.0000000000000p+0, 0x1.172b83c7d517bp+0, 0x1.306fe0a31b715p+0,
    0x1.4bfdad5362a27p+0, 0x1.6a09e667f3bcdp+0, 0x1.8ace5422aa0dbp+0,
    0x1.ae89f995ad3adp+0, 0x1.d5818dcfba487p+0, 0x1.0000000000000p+1};

struct Acc {
  double sum_abs = 0, sum_rel = 0, max_abs = -1, max_rel = 0, max_ratio = 0;
  double dot = 0, na2 = 0, nb2 = 0, nd2 = 0;
  uint64_t count = 0, mismatches = 0, nonfinite_new = 0, nonfinite_differ = 0, exact = 0;
  uint64_t stride = 1;                      // histograms see every stride-th element
  uint64_t sampled = 0, sampled_exact = 0;  // finite pairs the histograms saw, and their zeros
  uint64_t max_index = 0;
  double a_at = 0, b_at = 0;
  std::vector<uint64_t> hist_abs = std::vector<uint64_t>(kBins, 0);
  std::vector<uint64_t> hist_rel = std::vector<uint64_t>(kBins, 0);
  // per-side statistics over finite values (float32 fast path only)
  struct Side {
    double sum = 0, sumsq = 0, mn = INFINITY, mx = -INFINITY;
    uint64_t count = 0, nan = 0, inf = 0;
    void Merge(const Side& o) {
      sum += o.sum;
      sumsq += o.sumsq;
      mn = std::min(mn, o.mn);
      mx = std::max(mx, o.mx);
      count += o.count;
      nan += o.nan;
      inf += o.inf;
    }
    void Add(double v) {
      if (std::isnan(v)) {
        ++nan;
      } else if (std::isinf(v)) {
        ++inf;
      } else {
        sum += v;
        sumsq += v * v;
        mn = std::min(mn, v);
        mx = std::max(mx, v);
        ++count;
      }
    }
    TensorStats Stats() const {
      TensorStats s;
      s.count = count;
      s.nan_count = nan;
      s.inf_count = inf;
      if (count > 0) {
        s.min = mn;
        s.max = mx;
        s.mean = sum / double(count);
        double var = sumsq / double(count) - s.mean * s.mean;
        s.std = var > 0 ? std::sqrt(var) : 0;
      }
      return s;
    }
  } side_a, side_b;

  void Merge(const Acc& o) {
    side_a.Merge(o.side_a);
    side_b.Merge(o.side_b);
    sum_abs += o.sum_abs;
    sum_rel += o.sum_rel;
    if (o.max_abs > max_abs) {
      max_abs = o.max_abs;
      max_index = o.max_index;
      a_at = o.a_at;
      b_at = o.b_at;
    }
    max_rel = std::max(max_rel, o.max_rel);
    max_ratio = std::max(max_ratio, o.max_ratio);
    dot += o.dot;
    na2 += o.na2;
    nb2 += o.nb2;
    nd2 += o.nd2;
    count += o.count;
    mismatches += o.mismatches;
    nonfinite_new += o.nonfinite_new;
    nonfinite_differ += o.nonfinite_differ;
    exact += o.exact;
    sampled += o.sampled;
    sampled_exact += o.sampled_exact;
    for (int i = 0; i < kBins; ++i) {
      hist_abs[i] += o.hist_abs[i];
      hist_rel[i] += o.hist_rel[i];
    }
  }
};

// v = 2^e * m with m in [1, 2): the octave from the exponent bits, the bin inside it by comparing
// m with the edges (exact: scaling by 2^e does not round), so v >= HistogramEdge(k) iff
// Bin(v) >= k. The top 3 mantissa bits give j = floor(8(m-1)); since 1 + j/8 >= 2^(j/8) and
// 2^((j+2)/8) > 1 + (j+1)/8, the bin is j or j+1: one comparison decides.
inline int Bin(double v) {
  if (!(v > 0)) return 0;
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  int exp = static_cast<int>((bits >> 52) & 0x7ff) - 1023;
  if (exp < kHistMinExp) return 0;  // also subnormals
  if (exp >= kHistMinExp + kHistOctaves) return kBins - 1;
  uint64_t mbits = (bits & ((uint64_t(1) << 52) - 1)) | (uint64_t(1023) << 52);
  double m;
  std::memcpy(&m, &mbits, 8);
  int j = static_cast<int>((bits >> 49) & 7);
  return (exp - kHistMinExp) * kHistPerOctave + j + (m >= kOctaveEdges[j + 1] ? 1 : 0);
}

// Converts elements [begin, begin+n) of `t` to double.
void ToDouble(const Tensor& t, uint64_t begin, size_t n, double* out) {
  switch (t.dtype()) {
    case DType::kFloat32: {
      const float* p = t.data_as<float>() + begin;
#pragma omp simd
      for (size_t i = 0; i < n; ++i) out[i] = p[i];
      return;
    }
    case DType::kFloat64:
      std::memcpy(out, t.data_as<double>() + begin, n * 8);
      return;
    default:
      for (size_t i = 0; i < n; ++i) out[i] = ElementAsDouble(t, begin + i);
  }
}

void Element(double a, double b, const Tolerance& tol, double eps, uint64_t index, Acc* acc) {
  bool fa = std::isfinite(a), fb = std::isfinite(b);
  if (!fa || !fb) {
    bool same = (std::isnan(a) && std::isnan(b)) || (a == b);
    if (!same) {
      ++acc->nonfinite_differ;
      ++acc->mismatches;
      if (fa) ++acc->nonfinite_new;
    }
    return;
  }
  double d = b - a, ad = std::fabs(d), aa = std::fabs(a), rel = ad / (aa + eps);
  acc->sum_abs += ad;
  acc->sum_rel += rel;
  acc->max_rel = std::max(acc->max_rel, rel);
  acc->dot += a * b;
  acc->na2 += a * a;
  acc->nb2 += b * b;
  acc->nd2 += d * d;
  acc->mismatches += ad > tol.atol + tol.rtol * aa;
  acc->max_ratio = std::max(acc->max_ratio, ad / (tol.atol + tol.rtol * aa));
  ++acc->count;
  if (ad == 0) ++acc->exact;
  if (ad > acc->max_abs) {
    acc->max_abs = ad;
    acc->max_index = index;
    acc->a_at = a;
    acc->b_at = b;
  }
  if (index % acc->stride != 0) return;
  ++acc->sampled;
  if (ad == 0) {
    ++acc->sampled_exact;
  } else {
    ++acc->hist_abs[Bin(ad)];
    ++acc->hist_rel[Bin(rel)];
  }
}

// Sums of one chunk without NaN/Inf, from a SIMD loop.
struct ChunkSums {
  double sum_abs = 0, sum_rel = 0, cmax_abs = 0, cmax_rel = 0, cmax_ratio = 0;
  double dot = 0, na2 = 0, nb2 = 0, nd2 = 0;
  uint64_t mism = 0, exact = 0;
};

// The first element of a chunk starting at `c` that the histograms sample (every stride-th
// element of the tensor).
size_t FirstSampled(uint64_t c, uint64_t stride) {
  return static_cast<size_t>((stride - c % stride) % stride);
}

// Folds a finite chunk [c, c+n) into `acc`: its sums, the histograms (every acc->stride-th
// element; float32 chunks bin them on their own, BinChunkF32) and, when the chunk holds a new
// largest error, where it is.
template <typename T>
void AddChunk(const ChunkSums& s, const T* a, const T* b, uint64_t c, size_t n, double eps,
              Acc* acc) {
  if constexpr (!std::is_same_v<T, float>) {
    const uint64_t stride = acc->stride;
    uint64_t* hist_abs = acc->hist_abs.data();  // locals: the stores below cannot alias them
    uint64_t* hist_rel = acc->hist_rel.data();
    uint64_t sampled = 0, zeros = 0;
    for (size_t i = FirstSampled(c, stride); i < n; i += stride) {
      double ad = std::fabs(double(b[i]) - double(a[i]));
      double rel = ad / (std::fabs(double(a[i])) + eps);
      ++sampled;
      if (ad == 0) {
        ++zeros;
        continue;
      }
      ++hist_abs[Bin(ad)];
      ++hist_rel[Bin(rel)];
    }
    acc->sampled += sampled;
    acc->sampled_exact += zeros;
  }
  acc->sum_abs += s.sum_abs;
  acc->sum_rel += s.sum_rel;
  acc->max_rel = std::max(acc->max_rel, s.cmax_rel);
  acc->max_ratio = std::max(acc->max_ratio, s.cmax_ratio);
  acc->dot += s.dot;
  acc->na2 += s.na2;
  acc->nb2 += s.nb2;
  acc->nd2 += s.nd2;
  acc->mismatches += s.mism;
  acc->exact += s.exact;
  acc->count += n;
  if (s.cmax_abs <= acc->max_abs) return;
  for (size_t i = 0; i < n; ++i) {
    if (std::fabs(double(b[i]) - double(a[i])) == s.cmax_abs) {
      acc->max_abs = s.cmax_abs;
      acc->max_index = c + i;
      acc->a_at = a[i];
      acc->b_at = b[i];
      return;
    }
  }
}

void Range(const Tensor& a, const Tensor& b, uint64_t begin, uint64_t end, const Tolerance& tol,
           double eps, Acc* acc) {
  double da[kChunk], db[kChunk];
  for (uint64_t c = begin; c < end; c += kChunk) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, end - c));
    ToDouble(a, c, n, da);
    ToDouble(b, c, n, db);
    double probe = 0;
#pragma omp simd reduction(+ : probe)
    for (size_t i = 0; i < n; ++i) probe += (da[i] - da[i]) + (db[i] - db[i]);
    if (probe != 0 || std::isnan(probe)) {  // NaN or Inf somewhere in this chunk
      for (size_t i = 0; i < n; ++i) Element(da[i], db[i], tol, eps, c + i, acc);
      continue;
    }
    const double atol = tol.atol, rtol = tol.rtol;
    double sum_abs = 0, sum_rel = 0, cmax_abs = 0, cmax_rel = 0, cmax_ratio = 0;
    double dot = 0, na2 = 0, nb2 = 0, nd2 = 0;
    uint64_t mism = 0, exact = 0;
#pragma omp simd reduction(+ : sum_abs, sum_rel, dot, na2, nb2, nd2, mism, exact) \
    reduction(max : cmax_abs, cmax_rel, cmax_ratio)
    for (size_t i = 0; i < n; ++i) {
      double d = db[i] - da[i];
      double ad = std::fabs(d), aa = std::fabs(da[i]);
      double rel = ad / (aa + eps);
      double ratio = ad / (atol + rtol * aa);
      sum_abs += ad;
      sum_rel += rel;
      cmax_abs = ad > cmax_abs ? ad : cmax_abs;
      cmax_rel = rel > cmax_rel ? rel : cmax_rel;
      cmax_ratio = ratio > cmax_ratio ? ratio : cmax_ratio;
      dot += da[i] * db[i];
      na2 += da[i] * da[i];
      nb2 += db[i] * db[i];
      nd2 += d * d;
      mism += ad > atol + rtol * aa ? 1 : 0;
      exact += ad == 0 ? 1 : 0;
    }
    AddChunk(ChunkSums{sum_abs, sum_rel, cmax_abs, cmax_rel, cmax_ratio, dot, na2, nb2, nd2, mism,
                       exact},
             da, db, c, n, eps, acc);
  }
}

// float32 pairs: one pass, chunk by chunk (SumChunkF32: errors, both sides' statistics and the
// products at once). The largest tolerance ratio needs a division per element only in chunks
// that may raise it: SumChunkF32 counts elements with |b-a| above (running max * (1 - 2^-40)) *
// allowed, a product that never rounds above the exact bound, so no element whose rounded ratio
// exceeds the running max is missed. A chunk holding NaN/Inf is redone on the checked path.
void RangeF32(const float* pa, const float* pb, uint64_t begin, uint64_t end, const Tolerance& tol,
              double eps, Acc* acc) {
  const double atol = tol.atol, rtol = tol.rtol;
  for (uint64_t c = begin; c < end; c += kChunk) {
    size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, end - c));
    const float* a = pa + c;
    const float* b = pb + c;
    ChunkF32 s = SumChunkF32(a, b, n, {eps, atol, rtol, acc->max_ratio * (1 - 0x1p-40)});
    if (!std::isfinite(s.sum_a) || !std::isfinite(s.sum_b)) {
      for (size_t i = 0; i < n; ++i) {
        acc->side_a.Add(a[i]);
        acc->side_b.Add(b[i]);
        Element(a[i], b[i], tol, eps, c + i, acc);
      }
      continue;
    }
    double cmax_ratio = 0;
    if (s.above > 0) {
#pragma omp simd reduction(max : cmax_ratio)
      for (size_t i = 0; i < n; ++i) {
        double x = a[i], y = b[i];
        double ratio = std::fabs(y - x) / (atol + rtol * std::fabs(x));
        cmax_ratio = ratio > cmax_ratio ? ratio : cmax_ratio;
      }
    }
    acc->side_a.sum += s.sum_a;
    acc->side_b.sum += s.sum_b;
    acc->side_a.sumsq += s.sq_a;
    acc->side_b.sumsq += s.sq_b;
    acc->side_a.mn = std::min<double>(acc->side_a.mn, s.min_a);
    acc->side_a.mx = std::max<double>(acc->side_a.mx, s.max_a);
    acc->side_b.mn = std::min<double>(acc->side_b.mn, s.min_b);
    acc->side_b.mx = std::max<double>(acc->side_b.mx, s.max_b);
    acc->side_a.count += n;
    acc->side_b.count += n;
    ChunkSample h = BinChunkF32(a, b, n, FirstSampled(c, acc->stride), acc->stride, eps,
                                acc->hist_abs.data(), acc->hist_rel.data());
    acc->sampled += h.sampled;
    acc->sampled_exact += h.zeros;
    AddChunk(ChunkSums{s.sum_abs, s.sum_rel, s.max_abs, s.max_rel, cmax_ratio, s.dot, s.sq_a,
                       s.sq_b, s.sq_diff, s.mismatches, s.exact},
             a, b, c, n, eps, acc);
  }
}

// max |a| over finite values below 1e30, the scale of the default relative-error eps and of
// atol: fill values of that size (an attention mask of torch.finfo(float32).min added to scores)
// are no computed magnitude and would make every error of the scores pass
__attribute__((target_clones("avx2", "default"))) float MaxAbsF32(const float* p, uint64_t n) {
  constexpr float kFill = 1e30f;
  float m = 0;
#pragma omp simd reduction(max : m)
  for (uint64_t i = 0; i < n; ++i) {
    float v = std::fabs(p[i]);
    m = (v > m && v < kFill) ? v : m;  // NaN compares false
  }
  return m;
}

// A bound on numpy.percentile(x, 100q) from `zeros` exact matches plus the histogram of the
// other `total - zeros` values: the upper edge of the bin holding x[ceil(q*(total-1))] of the
// sorted values (numpy's "higher" method, >= its default linear interpolation), so never below
// it and at most one bin (2^(1/8)) above. The last bin is open: +inf (the caller clamps to max).
double HistogramPercentile(const std::vector<uint64_t>& hist, uint64_t zeros, uint64_t total,
                           double q) {
  if (total == 0) return 0;
  uint64_t target = static_cast<uint64_t>(std::ceil(q * double(total - 1))) + 1;  // 1-based
  uint64_t seen = zeros;
  if (seen >= target) return 0;
  for (int k = 0; k + 1 < kBins; ++k) {
    seen += hist[k];
    if (seen >= target) return HistogramEdge(k + 1);
  }
  return INFINITY;
}

// numpy.percentile(x, 100q) with its default (linear) method, computed the way numpy does, for
// tensors whose histograms saw every element: the histogram tells which bins hold the ranks
// floor(q*(n-1)) and the one after, and a second pass collects only the values in those bins.
class ExactPercentile {
 public:
  ExactPercentile(const std::vector<uint64_t>& hist, uint64_t zeros, uint64_t total, double q)
      : hist_(hist), zeros_(zeros) {
    if (total == 0) return;
    h_ = q * double(total - 1);
    lo_ = static_cast<uint64_t>(std::floor(h_));
    hi_ = std::min(lo_ + 1, total - 1);
    if (hi_ < zeros_) return;  // both ranks are exact matches: 0
    int k_lo = BinOf(std::max(lo_, zeros_)), k_hi = BinOf(hi_);
    base_ = zeros_;
    for (int k = 0; k < k_lo; ++k) base_ += hist_[k];
    uint64_t in_bins = 0;
    for (int k = k_lo; k <= k_hi; ++k) in_bins += hist_[k];
    values_.reserve(in_bins);
    low_ = k_lo == 0 ? 0 : HistogramEdge(k_lo);
    high_ = k_hi + 1 >= kBins ? INFINITY : HistogramEdge(k_hi + 1);
    needed_ = true;
  }
  bool needed() const { return needed_; }
  void Offer(double v) {
    if (v > 0 && v >= low_ && v < high_) values_.push_back(v);
  }
  // The values Offer takes (a range of positive values; empty when none is needed), and where
  // they go, for a caller that filters them itself.
  ValueRange range() const {
    if (!needed_) return ValueRange();
    return {low_ > 0 ? low_ : std::nextafter(0.0, 1.0), high_};
  }
  std::vector<double>* values() { return &values_; }
  double Result() {
    if (!needed_) return 0;
    // the two ranks' values without sorting: the first by selection, the second (the next rank)
    // as the smallest value after it
    double a = At(lo_), b = At(hi_), t = h_ - double(lo_);
    return t >= 0.5 ? b - (b - a) * (1 - t) : a + (b - a) * t;
  }

 private:
  int BinOf(uint64_t rank) const {  // rank >= zeros_: the bin holding sorted(x)[rank]
    uint64_t seen = zeros_;
    for (int k = 0; k < kBins; ++k) {
      seen += hist_[k];
      if (seen > rank) return k;
    }
    return kBins - 1;
  }
  // sorted(values_)[rank - base_]; called for lo_, then hi_ (lo_ or lo_ + 1)
  double At(uint64_t rank) {
    if (rank < zeros_) return 0;
    uint64_t i = rank - base_;
    if (i >= values_.size()) return 0;  // i is in range when the histogram is complete
    if (i == selected_) return values_[i];
    if (selected_ != kNone && i == selected_ + 1) {
      selected_ = i;  // everything after the selected value is at least it: take the smallest
      auto next = std::min_element(values_.begin() + static_cast<std::ptrdiff_t>(i), values_.end());
      std::iter_swap(values_.begin() + static_cast<std::ptrdiff_t>(i), next);
      return values_[i];
    }
    selected_ = i;
    std::nth_element(values_.begin(), values_.begin() + static_cast<std::ptrdiff_t>(i),
                     values_.end());
    return values_[i];
  }
  const std::vector<uint64_t>& hist_;
  uint64_t zeros_, lo_ = 0, hi_ = 0, base_ = 0;
  double h_ = 0, low_ = 0, high_ = 0;
  bool needed_ = false;
  std::vector<double> values_;
  static constexpr uint64_t kNone = ~uint64_t(0);
  uint64_t selected_ = kNone;  // values_[selected_] holds its sorted value, smaller ones before
};

// The second pass of ExactPercentile for |b-a| and the relative error, same formulas as the
// first pass (so the same values fall into the same bins).
void CollectExact(const Tensor& a, const Tensor& b, double eps, ExactPercentile* abs_p,
                  ExactPercentile* rel_p) {
  if (!abs_p->needed() && !rel_p->needed()) return;
  if (a.dtype() == DType::kFloat32 && b.dtype() == DType::kFloat32) {
    CollectF32(a.data_as<float>(), b.data_as<float>(), a.num_elements(), eps, abs_p->range(),
               rel_p->range(), abs_p->values(), rel_p->values());
    return;
  }
  double da[kChunk], db[kChunk];
  const uint64_t n = a.num_elements();
  for (uint64_t c = 0; c < n; c += kChunk) {
    size_t len = static_cast<size_t>(std::min<uint64_t>(kChunk, n - c));
    ToDouble(a, c, len, da);
    ToDouble(b, c, len, db);
    double ad[kChunk], rel[kChunk];
#pragma omp simd
    for (size_t i = 0; i < len; ++i) {
      ad[i] = std::fabs(db[i] - da[i]);
      rel[i] = ad[i] / (std::fabs(da[i]) + eps);
    }
    for (size_t i = 0; i < len; ++i) {
      if (!std::isfinite(da[i]) || !std::isfinite(db[i])) continue;
      abs_p->Offer(ad[i]);
      rel_p->Offer(rel[i]);
    }
  }
}

std::vector<int64_t> Unravel(uint64_t flat, const Shape& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t k = shape.size(); k-- > 0;) {
    if (shape[k] == 0) return idx;
    idx[k] = static_cast<int64_t>(flat % uint64_t(shape[k]));
    flat /= uint64_t(shape[k]);
  }
  return idx;
}

void Channels(const Tensor& a, const Tensor& b, const Tolerance& tol, TensorMetrics* m) {
  const Shape& s = a.shape();
  uint64_t outer = uint64_t(s[0]), channels = uint64_t(s[1]), inner = 1;
  for (size_t k = 2; k < s.size(); ++k) inner *= uint64_t(s[k]);
  if (channels == 0 || channels > (1u << 20)) return;
  std::vector<ChannelError> out(channels);
  std::vector<uint64_t> counts(channels, 0);
  for (uint64_t c = 0; c < channels; ++c) out[c].channel = static_cast<int64_t>(c);
  std::vector<double> da(inner), db(inner);
  for (uint64_t o = 0; o < outer; ++o) {
    for (uint64_t c = 0; c < channels; ++c) {
      uint64_t base = (o * channels + c) * inner;
      for (uint64_t j = 0; j < inner; j += kChunk) {
        size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, inner - j));
        ToDouble(a, base + j, n, da.data());
        ToDouble(b, base + j, n, db.data());
        for (size_t i = 0; i < n; ++i) {
          double ad = std::fabs(db[i] - da[i]);
          bool bad = !(ad <= tol.atol + tol.rtol * std::fabs(da[i]));
          if (std::isnan(da[i]) && std::isnan(db[i])) bad = false, ad = 0;
          if (std::isfinite(ad)) {
            out[c].max_abs = std::max(out[c].max_abs, ad);
            out[c].mean_abs += ad;
            ++counts[c];
          }
          out[c].mismatches += bad;
        }
      }
    }
  }
  for (uint64_t c = 0; c < channels; ++c) {
    if (counts[c] > 0) out[c].mean_abs /= double(counts[c]);
  }
  m->channels = std::move(out);
}

void TopK(const Tensor& a, const Tensor& b, int k, TensorMetrics* m) {
  const Shape& s = a.shape();
  if (s.empty() || s.back() < 2) return;
  uint64_t cols = uint64_t(s.back()), rows = a.num_elements() / cols;
  k = static_cast<int>(std::min<uint64_t>(uint64_t(k), cols));
  std::vector<double> ra(cols), rb(cols);
  std::vector<uint64_t> ia(cols), ib(cols);
  double agree = 0, overlap = 0;
  for (uint64_t r = 0; r < rows; ++r) {
    ToDouble(a, r * cols, cols, ra.data());
    ToDouble(b, r * cols, cols, rb.data());
    for (uint64_t j = 0; j < cols; ++j) ia[j] = ib[j] = j;
    auto by = [](const std::vector<double>& v) {
      return [&v](uint64_t x, uint64_t y) { return v[x] > v[y] || (v[x] == v[y] && x < y); };
    };
    std::partial_sort(ia.begin(), ia.begin() + k, ia.end(), by(ra));
    std::partial_sort(ib.begin(), ib.begin() + k, ib.end(), by(rb));
    agree += ia[0] == ib[0];
    int common = 0;
    for (int x = 0; x < k; ++x)
      common += std::find(ib.begin(), ib.begin() + k, ia[x]) != ib.begin() + k;
    overlap += double(common) / k;
  }
  m->has_topk = true;
  m->topk = k;
  m->argmax_agreement = rows ? agree / double(rows) : 1;
  m->topk_overlap = rows ? overlap / double(rows) : 1;
}

// float16 or bfloat16 against float32 (either side): a reduced-precision copy of the model, whose
// values are compared (converted to double as any non-float32 pair) under the same tolerances;
// dtype_a/dtype_b still say which is which. Other dtype pairs (float64 vs float32, an integer
// vs a float) fail as a dtype mismatch (docs/metrics.md, layer 1).
bool ReducedPrecisionPair(DType x, DType y) {
  auto reduced = [](DType t) { return t == DType::kFloat16 || t == DType::kBFloat16; };
  return (reduced(x) && y == DType::kFloat32) || (reduced(y) && x == DType::kFloat32);
}

}  // namespace

int HistogramBin(double v) { return Bin(v); }

double HistogramEdge(int k) {
  return std::ldexp(kOctaveEdges[k % kHistPerOctave], kHistMinExp + k / kHistPerOctave);
}

// Shapes that differ only by axes of size 1 ([1, 12, 128] and [12, 128]: a rewritten model
// that computes a MatMul as a 2-D Gemm) hold the same elements in the same row-major order, so
// they compare element by element (shape_a and shape_b still say both).
static bool SameButUnitAxes(const Shape& a, const Shape& b) {
  auto squeezed = [](const Shape& s) {
    Shape out;
    for (auto d : s) {
      if (d != 1) out.push_back(d);
    }
    return out;
  };
  return squeezed(a) == squeezed(b);
}

TensorMetrics CompareTensors(const Tensor& a, const Tensor& b, const Tolerance& tol_in,
                             double rel_eps, const CompareOptions& options) {
  TensorMetrics m;
  m.dtype_a = a.dtype();
  m.dtype_b = b.dtype();
  m.shape_a = a.shape();
  m.shape_b = b.shape();
  m.shape_match = a.shape() == b.shape() || SameButUnitAxes(a.shape(), b.shape()) ||
                  (options.reshaped_ok && a.num_elements() == b.num_elements());
  m.dtype_match = a.dtype() == b.dtype() || ReducedPrecisionPair(a.dtype(), b.dtype());
  bool f32 = a.dtype() == DType::kFloat32 && b.dtype() == DType::kFloat32;
  if (!f32 || !m.shape_match) {
    m.stats_a = ComputeStats(a);
    m.stats_b = ComputeStats(b);
  }
  if (!m.shape_match || !m.dtype_match || a.empty() || b.empty()) return m;
  double scale = f32 ? MaxAbsF32(a.data_as<float>(), a.num_elements())
                     : std::max(std::fabs(m.stats_a.min), std::fabs(m.stats_a.max));
  m.scale = scale;
  if (rel_eps < 0) rel_eps = std::max(1e-12, kRelEpsScale * scale);
  m.rel_eps = rel_eps;
  Tolerance used = tol_in;
  if (used.scale_atol) used.atol *= std::max(1.0, scale);
  used.atol = std::max(used.atol, used.noise_floor);
  m.atol_used = used.atol;
  const Tolerance& tol = used;

  uint64_t n = a.num_elements();
  unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  unsigned threads = options.threads > 0 ? unsigned(options.threads) : hw;
  // at least 2^20 elements (about a millisecond) per thread: a comparison of every tensor of a
  // model starts and joins threads per tensor, and on a busy machine each join can wait a
  // scheduler time slice (measured: ResNet-50's 169 tensors split at 2^16 spent 4-6x their
  // compute time waiting on a loaded 2-core machine)
  threads = static_cast<unsigned>(
      std::min<uint64_t>(threads, std::max<uint64_t>(1, n / kElementsPerCompareThread)));
  std::vector<Acc> parts(threads);
  // histograms (p99, the report's error histogram) sample at most ~64K elements per tensor:
  // binning every element would cost more than the rest of the pass together
  uint64_t stride = options.full_histogram ? 1 : std::max<uint64_t>(1, n >> 16);
  // below 2^17 elements every value is kept too (at most 2 MB) and p99 is exact
  for (auto& p : parts) p.stride = stride;
  uint64_t per = (n + threads - 1) / threads;
  per = (per + kChunk - 1) / kChunk * kChunk;
  auto work = [&](unsigned t, uint64_t begin, uint64_t end) {
    if (f32) {
      RangeF32(a.data_as<float>(), b.data_as<float>(), begin, end, tol, rel_eps, &parts[t]);
    } else {
      Range(a, b, begin, end, tol, rel_eps, &parts[t]);
    }
  };
  if (threads == 1) {
    work(0, 0, n);
  } else {
    std::vector<std::thread> pool;  // the first part runs on the calling thread
    for (unsigned t = 1; t < threads; ++t) {
      uint64_t begin = std::min(n, t * per), end = std::min(n, begin + per);
      pool.emplace_back(work, t, begin, end);
    }
    work(0, 0, std::min(n, per));
    for (auto& th : pool) th.join();
  }
  Acc acc = std::move(parts[0]);
  for (size_t t = 1; t < parts.size(); ++t) acc.Merge(parts[t]);
  if (f32) {
    m.stats_a = acc.side_a.Stats();
    m.stats_b = acc.side_b.Stats();
  }

  m.count = acc.count;
  m.nonfinite_new = acc.nonfinite_new;
  m.nonfinite_differ = acc.nonfinite_differ;
  m.mismatches = acc.mismatches;
  m.mismatch_fraction = n ? double(acc.mismatches) / double(n) : 0;
  if (acc.count > 0) {
    m.max_abs = std::max(0.0, acc.max_abs);
    m.mean_abs = acc.sum_abs / double(acc.count);
    m.max_rel = acc.max_rel;
    m.max_tol_ratio = acc.max_ratio;
    m.mean_rel = acc.sum_rel / double(acc.count);
    if (n < kExactBelow && stride == 1) {
      ExactPercentile abs_p(acc.hist_abs, acc.sampled_exact, acc.sampled, 0.99);
      ExactPercentile rel_p(acc.hist_rel, acc.sampled_exact, acc.sampled, 0.99);
      CollectExact(a, b, rel_eps, &abs_p, &rel_p);
      m.p99_exact = true;
      m.p99_abs = abs_p.Result();
      m.p99_rel = rel_p.Result();
    } else {
      m.p99_abs = std::min(m.max_abs,
                           HistogramPercentile(acc.hist_abs, acc.sampled_exact, acc.sampled, 0.99));
      m.p99_rel = std::min(m.max_rel,
                           HistogramPercentile(acc.hist_rel, acc.sampled_exact, acc.sampled, 0.99));
    }
    m.max_abs_index = Unravel(acc.max_index, a.shape());
    m.a_at_max = acc.a_at;
    m.b_at_max = acc.b_at;
  }
  if (acc.na2 == 0 && acc.nb2 == 0) {
    m.cosine = 1;
  } else if (acc.na2 == 0 || acc.nb2 == 0) {
    m.cosine = 0;
  } else {
    m.cosine = acc.dot / (std::sqrt(acc.na2) * std::sqrt(acc.nb2));
  }
  m.snr_db = acc.nd2 == 0 ? INFINITY : 10.0 * std::log10(acc.na2 / acc.nd2);
  m.abs_histogram = std::move(acc.hist_abs);
  m.exact_matches = acc.exact;
  m.histogram_stride = stride;
  m.histogram_exact = acc.sampled_exact;
  bool failing = m.mismatches > 0 || m.nonfinite_differ > 0;
  if (options.channels && failing && a.shape().size() >= 2) Channels(a, b, tol, &m);
  if (options.topk) TopK(a, b, options.k, &m);
  return m;
}

}  // namespace onnxprobe
