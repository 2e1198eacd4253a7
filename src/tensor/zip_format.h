// Little-endian helpers and record layouts of the zip container used by .npz.
#pragma once

#include <cstdint>
#include <string>

namespace onnxprobe::zip {

constexpr uint32_t kLocalSig = 0x04034b50;
constexpr uint32_t kCentralSig = 0x02014b50;
constexpr uint32_t kEndSig = 0x06054b50;
constexpr uint32_t kZip64EndSig = 0x06064b50;
constexpr uint32_t kZip64LocatorSig = 0x07064b50;
constexpr uint16_t kZip64ExtraId = 0x0001;
constexpr uint32_t kMax32 = 0xffffffffu;

inline uint16_t Get16(const uint8_t* p) { return uint16_t(p[0] | (p[1] << 8)); }
inline uint32_t Get32(const uint8_t* p) {
  return uint32_t(p[0]) | (uint32_t(p[1]) << 8) | (uint32_t(p[2]) << 16) | (uint32_t(p[3]) << 24);
}
inline uint64_t Get64(const uint8_t* p) {
  return uint64_t(Get32(p)) | (uint64_t(Get32(p + 4)) << 32);
}

inline void Put16(std::string& s, uint16_t v) {
  s += char(v & 0xff);
  s += char(v >> 8);
}
inline void Put32(std::string& s, uint32_t v) {
  Put16(s, uint16_t(v & 0xffff));
  Put16(s, uint16_t(v >> 16));
}
inline void Put64(std::string& s, uint64_t v) {
  Put32(s, uint32_t(v & 0xffffffffu));
  Put32(s, uint32_t(v >> 32));
}

}  // namespace onnxprobe::zip
