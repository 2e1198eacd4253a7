// Tensor: a dtype, a shape and an owned, 64-byte aligned buffer. Sizes are 64-bit throughout.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "onnxprobe/common/status.h"

namespace onnxprobe {

enum class DType : uint8_t {
  kFloat32,
  kFloat16,
  kBFloat16,
  kFloat64,
  kInt8,
  kInt16,
  kInt32,
  kInt64,
  kUInt8,
  kUInt16,
  kUInt32,
  kUInt64,
  kBool,
};

using Shape = std::vector<int64_t>;

size_t DTypeSize(DType t);
// numpy-style name: "float32", "bfloat16", "bool".
const char* DTypeName(DType t);
Expected<DType> DTypeFromName(const std::string& name);
// ONNX TensorProto.DataType value (FLOAT = 1, ...).
int DTypeToOnnx(DType t);
// Fails with kUnsupported naming the ONNX type (e.g. "STRING (8)") for types onnxprobe cannot hold.
Expected<DType> DTypeFromOnnx(int onnx_type);
std::string OnnxTypeName(int onnx_type);
bool IsFloating(DType t);

float HalfToFloat(uint16_t h);
uint16_t FloatToHalf(float f);  // round to nearest even
float BFloat16ToFloat(uint16_t b);
uint16_t FloatToBFloat16(float f);  // round to nearest even

// Number of elements; fails on negative dims or when the product overflows 2^63.
Expected<uint64_t> NumElements(const Shape& shape);
// Number of bytes; fails on negative dims or overflow.
Expected<uint64_t> NumBytes(DType t, const Shape& shape);
// "[1, 3, 224, 224]"; "[]" for a scalar.
std::string ShapeToString(const Shape& shape);

// Largest single tensor Tensor::Allocate accepts, in bytes. Defaults to the machine's physical
// memory; lowered by a memory budget. Requests above it fail before any allocation is tried.
void SetAllocationLimit(uint64_t bytes);
// A job's budget for as long as the job runs: sets the limit when `bytes` > 0, and puts back the
// one before when it ends, so one call's --max-memory never caps the calls after it.
class ScopedAllocationLimit {
 public:
  explicit ScopedAllocationLimit(uint64_t bytes);
  ~ScopedAllocationLimit();
  ScopedAllocationLimit(const ScopedAllocationLimit&) = delete;
  ScopedAllocationLimit& operator=(const ScopedAllocationLimit&) = delete;

 private:
  uint64_t before_;
  bool set_;
};
uint64_t AllocationLimit();

class Tensor {
 public:
  Tensor() = default;

  // Zero-filled tensor. Fails with kResourceExhausted instead of throwing when memory runs out,
  // and with kInvalidArgument for impossible shapes.
  static Expected<Tensor> Allocate(DType dtype, Shape shape);

  // Adopts memory owned elsewhere (e.g. a runtime's output buffer, released by the deleter of
  // `data`). `data` must hold NumBytes(dtype, shape) bytes; the shape must be valid.
  static Tensor Wrap(DType dtype, Shape shape, std::shared_ptr<uint8_t> data);

  DType dtype() const { return dtype_; }
  const Shape& shape() const { return shape_; }
  uint64_t num_elements() const { return num_elements_; }
  uint64_t byte_size() const { return num_elements_ * DTypeSize(dtype_); }
  bool empty() const { return data_ == nullptr; }

  void* data() { return data_.get(); }
  const void* data() const { return data_.get(); }
  template <typename T>
  T* data_as() {
    return static_cast<T*>(data());
  }
  template <typename T>
  const T* data_as() const {
    return static_cast<const T*>(data());
  }

  // Same bytes viewed with another shape of equal element count.
  Status Reshape(Shape shape);
  // True when dtype, shape and bytes are identical (NaN payloads compared bitwise).
  bool BitwiseEqual(const Tensor& other) const;

 private:
  DType dtype_ = DType::kFloat32;
  Shape shape_;
  uint64_t num_elements_ = 0;
  std::shared_ptr<uint8_t> data_;
};

// Summary statistics over the finite values, accumulated in double.
struct TensorStats {
  uint64_t count = 0;
  uint64_t nan_count = 0;
  uint64_t inf_count = 0;
  double min = 0, max = 0, mean = 0, std = 0;
};
TensorStats ComputeStats(const Tensor& t);

// Element `i` converted to double (bool -> 0/1).
double ElementAsDouble(const Tensor& t, uint64_t i);

}  // namespace onnxprobe
