// Comparing two tensors: the metrics engineers trust, a tolerance policy and a per-tensor verdict.
// Definitions of every metric: docs/metrics.md.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "onnxprobe/tensor/tensor.h"

namespace onnxprobe {

struct Tolerance {
  double atol = 1e-5;
  double rtol = 1e-3;
  // When set (the default), atol is for unit scale: the tolerance applied is
  // atol * max(1, max|a|), since float32 rounding in a sum grows with the size of its terms,
  // not of the result (an element near 0 in a tensor of magnitude 50 carries ~50x the noise).
  bool scale_atol = true;
  // Differences up to this size are what the runtime itself cannot reproduce run to run (a
  // measured noise floor): the absolute tolerance applied is never below it.
  double noise_floor = 0;
  // A PyTorch reference's own float32 rounding (max |float32 - float64| of the captured value,
  // DumpEntry::float64_error); 0 when not measured. Float32RoundingBudget() turns it into a
  // noise floor.
  double float64_error = 0;
};

// Both sides of a PyTorch-vs-ONNX row are float32 evaluations of one exact value; the captured one
// is `float64_error` away from it, and the runtime's, by the same kind of rounding, at most as far
// (measured on the zoo: 0.4-0.6x PyTorch's distance). Their difference is then at most
// 2 * float64_error (triangle inequality), which the row is allowed on top of its tolerance
// (docs/metrics.md, "Float32 rounding measured against float64"). Depends on side A alone.
constexpr double kFloat32RoundingSum = 2.0;
Tolerance Float32RoundingBudget(Tolerance t, double float64_error);

// max |side - exact| over the elements where both are finite and below 1e30 in magnitude (a mask
// value is no computed value); -1 when the element counts differ or a tensor is not numeric.
double DistanceFromExact(const Tensor& side, const Tensor& exact);
// The same rule for two ONNX sides and their exact reference (docs/metrics.md, "The exact
// reference"): both sides are evaluations of one exact value, each `error` away from it. Rounding
// error is, to first order, the unit roundoff `u` of the precision (float32 2^-24, float16 2^-11,
// bfloat16 2^-8) times a factor the computation sets (its amplification), the same for both sides:
// the factor is measured as min(error_a / u_a, error_b / u_b) (the side that rounds least per
// unit sets it, so a fault cannot raise it); |a - b| <= error_a + error_b, so the row is allowed
// 2 * factor * max(u_a, u_b) on top of its tolerance. Two float32 sides: 2 * min(error_a,
// error_b), the PyTorch rule's floor.
Tolerance ExactRoundingBudget(Tolerance t, double error_a, double error_b, double u_a = 0x1p-24,
                              double u_b = 0x1p-24);
// The unit roundoff of values stored in `t` (float32 2^-24, float16 2^-11, bfloat16 2^-8,
// float64 2^-53); float32's for any other type.
double UnitRoundoff(DType t);

// The budget of a Sin or Cos output whose argument has magnitude `argument_scale` (max|x| of
// the argument's row): they map an argument of any size to values of size 1 and pass its
// absolute error on unchanged (|sin x - sin y| <= |x - y|), so the absolute error allowed
// their argument, atol * max(1, argument_scale), is allowed them too (docs/metrics.md). Depends
// on the argument's magnitude only, never on an error measured upstream.
Tolerance PeriodicBudget(Tolerance t, double argument_scale);

// How a tensor is judged once shapes, dtypes and NaN/Inf are in order.
enum class JudgeBy { kElementwise, kMax, kMean, kP99 };
const char* JudgeByName(JudgeBy j);
// "elementwise", "max", "mean", "p99"; fails naming the accepted values.
Expected<JudgeBy> ParseJudgeBy(const std::string& s);

struct ToleranceRule {
  std::string pattern;  // ECMAScript regex over tensor names, or an op type when by_op_type
  bool by_op_type = false;
  Tolerance tolerance;
};

struct TolerancePolicy {
  Tolerance global;
  std::vector<ToleranceRule> rules;  // later rules override earlier ones
  JudgeBy judge = JudgeBy::kElementwise;
  // relative error is |b-a| / (|a| + eps). eps = rel_eps when >= 0; otherwise (default)
  // eps = kRelEpsScale * max|a| of the reference tensor, so elements far below the tensor's own
  // scale (cancellation near zero) do not dominate the relative error.
  double rel_eps = -1;
  // Per-tensor noise floors (ReadNoiseFloor): For() sets Tolerance::noise_floor from them.
  std::map<std::string, double> noise_floor;
  // The tolerance for one tensor. Fails only for malformed regex patterns.
  Tolerance For(const std::string& tensor, const std::string& op_type) const;
  Status Validate() const;
};

enum class Grade { kExcellent, kAcceptable, kHighRisk };  // max relative error <1e-4, <1e-3, >=1e-3
const char* GradeName(Grade g);
Grade GradeFor(double max_rel);

struct ChannelError {
  int64_t channel = 0;
  double max_abs = 0, mean_abs = 0;
  uint64_t mismatches = 0;
};

struct TensorMetrics {
  DType dtype_a = DType::kFloat32, dtype_b = DType::kFloat32;
  Shape shape_a, shape_b;
  bool shape_match = false, dtype_match = false;
  TensorStats stats_a, stats_b;
  uint64_t count = 0;             // elements compared
  uint64_t nonfinite_new = 0;     // NaN/Inf in B where A is finite
  uint64_t nonfinite_differ = 0;  // positions where the NaN/Inf pattern differs at all
  double max_abs = 0, mean_abs = 0, p99_abs = 0;
  double max_rel = 0, mean_rel = 0, p99_rel = 0;
  uint64_t mismatches = 0;   // |b-a| > atol + rtol*|a|, plus differing NaN/Inf positions
  double max_tol_ratio = 0;  // max |b-a| / (atol + rtol*|a|) over finite pairs (> 1: mismatch)
  double mismatch_fraction = 0;
  double cosine = 1;                   // 1 when both are all zero
  double snr_db = 0;                   // +inf when identical (written as null in JSON)
  std::vector<int64_t> max_abs_index;  // multi-index of the largest absolute error
  double a_at_max = 0, b_at_max = 0;
  uint64_t exact_matches = 0;  // finite pairs with b == a
  // log2-spaced histogram of nonzero |b-a| over finite pairs: bin k counts errors in
  // [HistogramEdge(k), HistogramEdge(k+1)) (see HistogramBin)
  std::vector<uint64_t> abs_histogram;
  // The histograms see every histogram_stride-th element: all of them below 2^17 elements (or
  // when CompareOptions::full_histogram), a systematic sample of about 2^16 beyond;
  // histogram_exact counts its exact matches.
  uint64_t histogram_stride = 1, histogram_exact = 0;
  // p99_abs/p99_rel are numpy.percentile(x, 99) exactly below 2^17 elements; otherwise the upper
  // edge of the histogram bin holding numpy's "higher" 99th percentile of the elements binned:
  // never below it, at most 2^(1/8) (~9%) above (docs/metrics.md).
  bool p99_exact = false;
  double rel_eps = 0;  // the eps the relative errors used
  // max |a| the tolerance scales with: finite values below 1e30 (mask fills excluded)
  double scale = 0;
  double atol_used = 0;  // the absolute tolerance applied (atol, scaled when scale_atol)
  std::vector<ChannelError> channels;  // per index of axis 1, for failing tensors of rank >= 2
  bool has_topk = false;
  int topk = 0;
  double argmax_agreement = 0;  // fraction of rows (last axis) whose argmax agrees
  double topk_overlap = 0;      // mean |topk(A) & topk(B)| / k over rows
};

constexpr double kRelEpsScale = 1e-3;

constexpr int kHistMinExp = -40;  // 2^-40 ~ 9e-13
constexpr int kHistOctaves = 64;
constexpr int kHistPerOctave = 8;
constexpr int kHistBins = kHistOctaves * kHistPerOctave;

// The one definition of the error histograms' bins, used by the kernel, the percentiles and any
// reader of a histogram: bin k covers [HistogramEdge(k), HistogramEdge(k+1)) with
// HistogramEdge(k) = 2^(kHistMinExp + k / kHistPerOctave) (the double nearest to it); bin 0 also
// holds anything smaller (and 0), bin kHistBins-1 anything larger. Valid k: 0..kHistBins.
int HistogramBin(double v);
double HistogramEdge(int k);

// A tensor is split across threads only with at least this many elements per thread (each
// costs about a millisecond: fewer would spend more on starting and joining threads).
constexpr uint64_t kElementsPerCompareThread = uint64_t(1) << 20;

struct CompareOptions {
  int threads = 0;       // 0: hardware concurrency
  bool channels = true;  // per-channel breakdown when the tensor fails
  bool topk = false;     // force argmax/top-k metrics
  int k = 5;
  // Bin every element of large tensors too (p99 then bounded for the whole tensor, not a sample);
  // costs a histogram update per element. Set for judging by p99.
  bool full_histogram = false;
  // Shapes with the same number of elements compare in row-major order (a reshape never moves
  // an element): for intermediate tensors of two models whose pairing says they hold one value
  // (a graph tool computing [2, 12, 32] as a 2-D Gemm's [24, 32]). Shapes that differ only by
  // axes of size 1 always do.
  bool reshaped_ok = false;
};

// Compares B (under test) against A (reference), accumulating in double. Shape or dtype
// mismatches stop after layer 1 (stats of each side are still filled in). `rel_eps` < 0 selects
// the scale-relative eps described in TolerancePolicy.
TensorMetrics CompareTensors(const Tensor& a, const Tensor& b, const Tolerance& tol, double rel_eps,
                             const CompareOptions& options);

// The kernel options judging under `policy` needs: judging by p99 bins every element, so p99 is
// exact (or a bound for the whole tensor), never a sample's estimate (docs/metrics.md).
CompareOptions KernelOptionsFor(const TolerancePolicy& policy, CompareOptions options);

// PASS/FAIL under the policy's judging mode; `reason` says why a tensor failed.
bool Judge(const TensorMetrics& m, const Tolerance& tol, JudgeBy judge, std::string* reason);
// How close a measured tensor is to its tolerance under the judging mode: error / allowed
// error, so > 1 fails (infinity for shape, dtype or NaN/Inf failures).
double ToleranceRatio(const TensorMetrics& m, const Tolerance& tol, JudgeBy judge);

}  // namespace onnxprobe
