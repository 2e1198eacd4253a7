// Internal: little-endian payload fields for messages between onnxprobe's processes (the
// isolated side's wire, side/wire.h; the platform worker's stream, backend/remote).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "onnxprobe/common/status.h"

namespace onnxprobe::wire {

// Payload encoding. Reads past the end, or impossible sizes, make the Reader fail (sticky); the
// caller checks ok() once at the end.
class Writer {
 public:
  void U8(uint8_t v) { bytes_.push_back(static_cast<char>(v)); }
  void U32(uint32_t v) { Raw(&v, sizeof v); }
  void U64(uint64_t v) { Raw(&v, sizeof v); }
  void I64(int64_t v) { Raw(&v, sizeof v); }
  void Str(const std::string& s) {
    U64(s.size());
    bytes_.append(s);
  }
  void Stat(const Status& s) {
    U32(static_cast<uint32_t>(s.code()));
    Str(s.message());
  }
  void Ids(const std::vector<uint64_t>& v) {
    U64(v.size());
    for (uint64_t x : v) U64(x);
  }
  void Strings(const std::vector<std::string>& v) {
    U64(v.size());
    for (const auto& s : v) Str(s);
  }
  std::string& bytes() { return bytes_; }

 private:
  void Raw(const void* p, size_t n) { bytes_.append(static_cast<const char*>(p), n); }
  std::string bytes_;
};

class Reader {
 public:
  explicit Reader(const std::string& bytes) : bytes_(bytes) {}
  uint8_t U8();
  uint32_t U32();
  uint64_t U64();
  int64_t I64();
  std::string Str();
  Status Stat();
  std::vector<std::string> Strings();
  std::vector<uint64_t> Ids();
  // A count of items that each take at least `min_item_bytes` of what is left; 0 and failure when
  // the payload cannot hold that many.
  uint64_t Count(uint64_t min_item_bytes);
  bool ok() const { return ok_; }
  bool done() const { return ok_ && pos_ == bytes_.size(); }
  // kCorrupt naming `what` unless every byte was read without running past the end.
  Status Finish(const std::string& what) const;

 private:
  bool Take(void* out, size_t n);
  const std::string& bytes_;
  size_t pos_ = 0;
  bool ok_ = true;
};

}  // namespace onnxprobe::wire
