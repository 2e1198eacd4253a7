#include "onnxprobe/tensor/tensor.h"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>

namespace onnxprobe {

Expected<uint64_t> NumElements(const Shape& shape) {
  uint64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return InvalidArgument("negative dimension " + std::to_string(d) + " in shape " +
                             ShapeToString(shape));
    if (d != 0 && n > (uint64_t(INT64_MAX) / uint64_t(d))) {
      return InvalidArgument("shape " + ShapeToString(shape) + " overflows 64-bit element count");
    }
    n *= uint64_t(d);
  }
  return n;
}

Expected<uint64_t> NumBytes(DType t, const Shape& shape) {
  OP_ASSIGN_OR_RETURN(uint64_t n, NumElements(shape));
  if (n > uint64_t(INT64_MAX) / DTypeSize(t)) {
    return InvalidArgument("shape " + ShapeToString(shape) + " of " + DTypeName(t) +
                           " overflows 64-bit byte size");
  }
  return n * DTypeSize(t);
}

std::string ShapeToString(const Shape& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

namespace {

uint64_t PhysicalMemory() {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : (uint64_t(1) << 40);
}

std::atomic<uint64_t>& LimitRef() {
  static std::atomic<uint64_t> limit{PhysicalMemory()};
  return limit;
}

}  // namespace

void SetAllocationLimit(uint64_t bytes) { LimitRef() = bytes; }

ScopedAllocationLimit::ScopedAllocationLimit(uint64_t bytes)
    : before_(AllocationLimit()), set_(bytes > 0) {
  if (set_) SetAllocationLimit(bytes);
}

ScopedAllocationLimit::~ScopedAllocationLimit() {
  if (set_) SetAllocationLimit(before_);
}
uint64_t AllocationLimit() { return LimitRef(); }

Expected<Tensor> Tensor::Allocate(DType dtype, Shape shape) {
  OP_ASSIGN_OR_RETURN(uint64_t bytes, NumBytes(dtype, shape));
  if (bytes > AllocationLimit()) {
    return ResourceExhausted("a " + std::string(DTypeName(dtype)) + " tensor of shape " +
                             ShapeToString(shape) + " needs " + std::to_string(bytes) +
                             " bytes, more than the allocation limit of " +
                             std::to_string(AllocationLimit()) +
                             " bytes (the memory budget, --max-memory, when one is given)");
  }
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  t.num_elements_ = bytes / DTypeSize(dtype);
  size_t alloc = static_cast<size_t>((bytes + 63) / 64 * 64);
  if (alloc == 0) alloc = 64;
  void* p = std::aligned_alloc(64, alloc);
  if (p == nullptr) {
    return ResourceExhausted("cannot allocate " + std::to_string(bytes) + " bytes for a " +
                             DTypeName(dtype) + " tensor of shape " + ShapeToString(t.shape_));
  }
  std::memset(p, 0, alloc);
  t.data_ = std::shared_ptr<uint8_t>(static_cast<uint8_t*>(p), [](uint8_t* q) { std::free(q); });
  return t;
}

Tensor Tensor::Wrap(DType dtype, Shape shape, std::shared_ptr<uint8_t> data) {
  Tensor t;
  t.dtype_ = dtype;
  t.shape_ = std::move(shape);
  auto n = NumElements(t.shape_);
  t.num_elements_ = n.ok() ? *n : 0;
  t.data_ = std::move(data);
  return t;
}

Status Tensor::Reshape(Shape shape) {
  OP_ASSIGN_OR_RETURN(uint64_t n, NumElements(shape));
  if (n != num_elements_) {
    return InvalidArgument("cannot reshape " + ShapeToString(shape_) + " to " +
                           ShapeToString(shape) + ": element counts differ");
  }
  shape_ = std::move(shape);
  return Status::Ok();
}

bool Tensor::BitwiseEqual(const Tensor& other) const {
  if (dtype_ != other.dtype_ || shape_ != other.shape_) return false;
  if (byte_size() == 0) return true;
  return std::memcmp(data(), other.data(), byte_size()) == 0;
}

double ElementAsDouble(const Tensor& t, uint64_t i) {
  const void* p = t.data();
  switch (t.dtype()) {
    case DType::kFloat32:
      return static_cast<const float*>(p)[i];
    case DType::kFloat16:
      return HalfToFloat(static_cast<const uint16_t*>(p)[i]);
    case DType::kBFloat16:
      return BFloat16ToFloat(static_cast<const uint16_t*>(p)[i]);
    case DType::kFloat64:
      return static_cast<const double*>(p)[i];
    case DType::kInt8:
      return static_cast<const int8_t*>(p)[i];
    case DType::kInt16:
      return static_cast<const int16_t*>(p)[i];
    case DType::kInt32:
      return static_cast<const int32_t*>(p)[i];
    case DType::kInt64:
      return static_cast<double>(static_cast<const int64_t*>(p)[i]);
    case DType::kUInt8:
      return static_cast<const uint8_t*>(p)[i];
    case DType::kUInt16:
      return static_cast<const uint16_t*>(p)[i];
    case DType::kUInt32:
      return static_cast<const uint32_t*>(p)[i];
    case DType::kUInt64:
      return static_cast<double>(static_cast<const uint64_t*>(p)[i]);
    case DType::kBool:
      return static_cast<const uint8_t*>(p)[i] ? 1.0 : 0.0;
  }
  return 0.0;
}

namespace {

template <typename Get>
TensorStats StatsLoop(uint64_t n, Get get) {
  TensorStats s;
  double sum = 0, sum_sq = 0;
  bool first = true;
  for (uint64_t i = 0; i < n; ++i) {
    double v = get(i);
    if (std::isnan(v)) {
      ++s.nan_count;
      continue;
    }
    if (std::isinf(v)) {
      ++s.inf_count;
      continue;
    }
    if (first) {
      s.min = s.max = v;
      first = false;
    }
    s.min = v < s.min ? v : s.min;
    s.max = v > s.max ? v : s.max;
    sum += v;
    sum_sq += v * v;
    ++s.count;
  }
  if (s.count > 0) {
    s.mean = sum / double(s.count);
    double var = sum_sq / double(s.count) - s.mean * s.mean;
    s.std = var > 0 ? std::sqrt(var) : 0.0;
  }
  return s;
}

// Blocked float32 pass: finite blocks (the common case) run a branch-free, vectorizable loop
// with double accumulators per block; blocks holding NaN/Inf fall back to the checked loop.
TensorStats Float32Stats(const float* p, uint64_t n) {
  constexpr uint64_t kBlock = 4096;
  TensorStats s;
  double sum = 0, sum_sq = 0;
  float mn = INFINITY, mx = -INFINITY;
  for (uint64_t b = 0; b < n; b += kBlock) {
    uint64_t e = std::min(n, b + kBlock);
    float bmn = INFINITY, bmx = -INFINITY;
    double bs = 0, bq = 0;
    for (uint64_t i = b; i < e; ++i) {
      float v = p[i];
      bmn = v < bmn ? v : bmn;
      bmx = v > bmx ? v : bmx;
      bs += v;
      bq += double(v) * v;
    }
    if (std::isfinite(bs) && std::isfinite(bq) && std::isfinite(bmn) && std::isfinite(bmx)) {
      sum += bs;
      sum_sq += bq;
      mn = std::min(mn, bmn);
      mx = std::max(mx, bmx);
      s.count += e - b;
      continue;
    }
    TensorStats part = StatsLoop(e - b, [p, b](uint64_t i) { return double(p[b + i]); });
    s.nan_count += part.nan_count;
    s.inf_count += part.inf_count;
    if (part.count > 0) {
      mn = std::min(mn, float(part.min));
      mx = std::max(mx, float(part.max));
      sum += part.mean * double(part.count);
      sum_sq += (part.std * part.std + part.mean * part.mean) * double(part.count);
      s.count += part.count;
    }
  }
  if (s.count > 0) {
    s.min = mn;
    s.max = mx;
    s.mean = sum / double(s.count);
    double var = sum_sq / double(s.count) - s.mean * s.mean;
    s.std = var > 0 ? std::sqrt(var) : 0.0;
  }
  return s;
}

}  // namespace

TensorStats ComputeStats(const Tensor& t) {
  uint64_t n = t.num_elements();
  if (t.empty()) return {};
  switch (t.dtype()) {
    case DType::kFloat32:
      return Float32Stats(t.data_as<float>(), n);
    case DType::kFloat64: {
      const double* p = t.data_as<double>();
      return StatsLoop(n, [p](uint64_t i) { return p[i]; });
    }
    default:
      return StatsLoop(n, [&t](uint64_t i) { return ElementAsDouble(t, i); });
  }
}

}  // namespace onnxprobe
