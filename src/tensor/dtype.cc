#include <cmath>
#include <cstring>

#include "onnxprobe/tensor/tensor.h"

namespace onnxprobe {
namespace {

struct DTypeRow {
  DType dtype;
  const char* name;
  size_t size;
  int onnx;
};

// ONNX TensorProto.DataType numbering.
constexpr DTypeRow kRows[] = {
    {DType::kFloat32, "float32", 4, 1},    {DType::kFloat16, "float16", 2, 10},
    {DType::kBFloat16, "bfloat16", 2, 16}, {DType::kFloat64, "float64", 8, 11},
    {DType::kInt8, "int8", 1, 3},          {DType::kInt16, "int16", 2, 5},
    {DType::kInt32, "int32", 4, 6},        {DType::kInt64, "int64", 8, 7},
    {DType::kUInt8, "uint8", 1, 2},        {DType::kUInt16, "uint16", 2, 4},
    {DType::kUInt32, "uint32", 4, 12},     {DType::kUInt64, "uint64", 8, 13},
    {DType::kBool, "bool", 1, 9},
};

const DTypeRow& Row(DType t) { return kRows[static_cast<int>(t)]; }

uint32_t FloatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float BitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

}  // namespace

size_t DTypeSize(DType t) { return Row(t).size; }
const char* DTypeName(DType t) { return Row(t).name; }
int DTypeToOnnx(DType t) { return Row(t).onnx; }

Expected<DType> DTypeFromName(const std::string& name) {
  for (const auto& r : kRows) {
    if (name == r.name) return r.dtype;
  }
  if (name == "float") return DType::kFloat32;
  if (name == "double") return DType::kFloat64;
  if (name == "half") return DType::kFloat16;
  return InvalidArgument("unknown dtype '" + name + "'");
}

std::string OnnxTypeName(int onnx_type) {
  static const char* kNames[] = {
      "UNDEFINED",      "FLOAT",      "UINT8",          "INT8",       "UINT16",   "INT16",
      "INT32",          "INT64",      "STRING",         "BOOL",       "FLOAT16",  "DOUBLE",
      "UINT32",         "UINT64",     "COMPLEX64",      "COMPLEX128", "BFLOAT16", "FLOAT8E4M3FN",
      "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ", "UINT4",      "INT4",     "FLOAT4E2M1"};
  std::string n = (onnx_type >= 0 && onnx_type < static_cast<int>(std::size(kNames)))
                      ? kNames[onnx_type]
                      : "UNKNOWN";
  return n + " (" + std::to_string(onnx_type) + ")";
}

Expected<DType> DTypeFromOnnx(int onnx_type) {
  for (const auto& r : kRows) {
    if (r.onnx == onnx_type) return r.dtype;
  }
  return Unsupported("element type " + OnnxTypeName(onnx_type) + " is not supported");
}

bool IsFloating(DType t) {
  return t == DType::kFloat32 || t == DType::kFloat16 || t == DType::kBFloat16 ||
         t == DType::kFloat64;
}

float HalfToFloat(uint16_t h) {
  uint32_t sign = uint32_t(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t man = h & 0x3ff;
  if (exp == 0) {
    // zero or subnormal: value = man * 2^-24
    float v = std::ldexp(static_cast<float>(man), -24);
    return sign ? -v : v;
  }
  if (exp == 31) return BitsFloat(sign | 0x7f800000u | (man << 13));
  return BitsFloat(sign | ((exp + 112) << 23) | (man << 13));
}

uint16_t FloatToHalf(float f) {
  uint32_t x = FloatBits(f);
  uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // Inf or NaN
    return sign | 0x7c00 | (abs > 0x7f800000u ? 0x200 : 0);
  }
  if (abs >= 0x477ff000u) return sign | 0x7c00;  // rounds to >= 65520: overflow to Inf
  if (abs < 0x38800000u) {                       // below the smallest normal half: subnormal
    float v = BitsFloat(abs);
    // nearbyint uses round-half-even under the default rounding mode
    auto m = static_cast<uint32_t>(std::nearbyint(std::ldexp(v, 24)));
    return sign | static_cast<uint16_t>(m);
  }
  uint32_t mant_odd = (abs >> 13) & 1;
  abs += 0xfff + mant_odd;  // round to nearest even
  return sign | static_cast<uint16_t>((abs - 0x38000000u) >> 13);
}

float BFloat16ToFloat(uint16_t b) { return BitsFloat(uint32_t(b) << 16); }

uint16_t FloatToBFloat16(float f) {
  uint32_t x = FloatBits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40);  // NaN
  uint32_t lsb = (x >> 16) & 1;
  x += 0x7fff + lsb;
  return static_cast<uint16_t>(x >> 16);
}

}  // namespace onnxprobe
