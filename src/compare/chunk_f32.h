// Internal: the inner work of the float32 comparison kernel on one chunk (a few thousand
// elements, so it stays in L1): every sum, extreme and count in one pass over the chunk, with an
// AVX2 path where the CPU has it.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace onnxprobe {

struct ChunkF32Params {
  double eps = 0;   // relative error: |b-a| / (|a| + eps)
  double atol = 0;  // allowed error: atol + rtol * |a|
  double rtol = 0;
  double raise = 0;  // `above` counts |b-a| > raise * allowed
};

// Sums over the chunk, each in double from the float values. Meaningful only when `sum_a` and
// `sum_b` are finite: a chunk holding NaN/Inf makes them NaN/Inf (a sum of finite floats in
// double cannot overflow at these sizes), and the caller redoes it element by element.
struct ChunkF32 {
  double sum_a = 0, sum_b = 0, dot = 0, sq_a = 0, sq_b = 0;  // sq: sum of squares
  double sum_abs = 0, sum_rel = 0, sq_diff = 0, max_abs = 0, max_rel = 0;
  uint64_t mismatches = 0;  // |b-a| > allowed
  uint64_t exact = 0;       // b == a
  uint64_t above = 0;       // |b-a| > raise * allowed
  float min_a = 0, max_a = 0, min_b = 0, max_b = 0;
};

// n <= 2^20. Every formula is the scalar one (no fused multiply-add), so the per-element values
// are those of a scalar loop; only the order of the sums differs.
ChunkF32 SumChunkF32(const float* a, const float* b, size_t n, const ChunkF32Params& p);
// The portable path, which SumChunkF32 runs where the CPU lacks AVX2 or FMA (tests compare both).
ChunkF32 SumChunkF32Portable(const float* a, const float* b, size_t n, const ChunkF32Params& p);

// The error histograms (HistogramBin) of elements first, first + stride, ... below n of a chunk
// without NaN/Inf: |b-a| into hist_abs and |b-a| / (|a| + eps) into hist_rel, exact matches only
// counted. Returns how many elements were sampled and how many of them were exact matches.
struct ChunkSample {
  uint64_t sampled = 0, zeros = 0;
};
ChunkSample BinChunkF32(const float* a, const float* b, size_t n, size_t first, size_t stride,
                        double eps, uint64_t* hist_abs, uint64_t* hist_rel);
// Appends |b-a| to abs_out where it lies in abs_range, and |b-a| / (|a| + eps) to rel_out where
// it lies in rel_range, for pairs without NaN/Inf ([low, high) with low > 0; an empty range takes
// nothing). The values are those BinChunkF32 bins.
struct ValueRange {
  double low = INFINITY, high = INFINITY;
};
void CollectF32(const float* a, const float* b, size_t n, double eps, ValueRange abs_range,
                ValueRange rel_range, std::vector<double>* abs_out, std::vector<double>* rel_out);
void CollectF32Portable(const float* a, const float* b, size_t n, double eps, ValueRange abs_range,
                        ValueRange rel_range, std::vector<double>* abs_out,
                        std::vector<double>* rel_out);
ChunkSample BinChunkF32Portable(const float* a, const float* b, size_t n, size_t first,
                                size_t stride, double eps, uint64_t* hist_abs, uint64_t* hist_rel);

}  // namespace onnxprobe
