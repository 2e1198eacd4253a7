// Protobuf wire encoding by hand, for tests that build ONNX files byte by byte (fields the
// generated classes would reorder or drop, repeated fields, unknown fields).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace onnxprobe::wire {

inline std::string Varint(uint64_t v) {
  std::string out;
  for (; v >= 0x80; v >>= 7) out.push_back(char((v & 0x7f) | 0x80));
  out.push_back(char(v));
  return out;
}
// A length-delimited field.
inline std::string Len(int field, const std::string& body) {
  return Varint(uint64_t(field) << 3 | 2) + Varint(body.size()) + body;
}
// A varint field.
inline std::string Int(int field, uint64_t v) { return Varint(uint64_t(field) << 3) + Varint(v); }
// `n` deterministic bytes that differ per `seed`.
inline std::string Bytes(size_t n, int seed) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = char((i * 131 + size_t(seed) * 7 + (i >> 9)) & 0xff);
  return s;
}

}  // namespace onnxprobe::wire
