#include "common/byte_codec.h"

#include <cstring>

namespace onnxprobe::wire {

bool Reader::Take(void* out, size_t n) {
  if (!ok_ || bytes_.size() - pos_ < n) {
    ok_ = false;
    std::memset(out, 0, n);
    return false;
  }
  std::memcpy(out, bytes_.data() + pos_, n);
  pos_ += n;
  return true;
}

uint8_t Reader::U8() {
  uint8_t v;
  Take(&v, sizeof v);
  return v;
}
uint32_t Reader::U32() {
  uint32_t v;
  Take(&v, sizeof v);
  return v;
}
uint64_t Reader::U64() {
  uint64_t v;
  Take(&v, sizeof v);
  return v;
}
int64_t Reader::I64() {
  int64_t v;
  Take(&v, sizeof v);
  return v;
}

std::string Reader::Str() {
  uint64_t n = U64();
  if (!ok_ || bytes_.size() - pos_ < n) {
    ok_ = false;
    return std::string();
  }
  std::string s = bytes_.substr(pos_, n);
  pos_ += n;
  return s;
}

Status Reader::Stat() {
  uint32_t code = U32();
  std::string msg = Str();
  if (code > static_cast<uint32_t>(ErrorCode::kResourceExhausted)) ok_ = false;
  if (!ok_ || code == 0) return Status::Ok();
  return Status(static_cast<ErrorCode>(code), msg);
}

uint64_t Reader::Count(uint64_t min_item_bytes) {
  uint64_t n = U64();
  if (ok_ && min_item_bytes > 0 && n > (bytes_.size() - pos_) / min_item_bytes) ok_ = false;
  return ok_ ? n : 0;
}

std::vector<std::string> Reader::Strings() {
  uint64_t n = Count(sizeof(uint64_t));
  std::vector<std::string> v;
  v.reserve(n);
  for (uint64_t i = 0; i < n && ok_; ++i) v.push_back(Str());
  return v;
}

std::vector<uint64_t> Reader::Ids() {
  uint64_t n = Count(sizeof(uint64_t));
  std::vector<uint64_t> v;
  v.reserve(n);
  for (uint64_t i = 0; i < n && ok_; ++i) v.push_back(U64());
  return v;
}

Status Reader::Finish(const std::string& what) const {
  if (done()) return Status::Ok();
  return Corrupt("malformed " + what + " message between onnxprobe and its child process");
}

}  // namespace onnxprobe::wire
