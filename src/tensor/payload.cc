#include "tensor/payload.h"

#include <vector>

namespace onnxprobe {

uint64_t NpyPayloadSize(const Tensor& t) {
  return t.dtype() == DType::kBFloat16 ? t.num_elements() * 4 : t.byte_size();
}

bool ForEachNpyPayloadChunk(const Tensor& t, const std::function<bool(const void*, size_t)>& sink) {
  constexpr uint64_t kChunk = 1 << 22;
  if (t.dtype() != DType::kBFloat16) {
    const auto* p = t.data_as<uint8_t>();
    for (uint64_t off = 0; off < t.byte_size(); off += kChunk) {
      uint64_t n = std::min(kChunk, t.byte_size() - off);
      if (!sink(p + off, static_cast<size_t>(n))) return false;
    }
    return true;
  }
  const auto* src = t.data_as<uint16_t>();
  std::vector<float> buf(kChunk / 4);
  for (uint64_t off = 0; off < t.num_elements(); off += buf.size()) {
    uint64_t n = std::min<uint64_t>(buf.size(), t.num_elements() - off);
    for (uint64_t i = 0; i < n; ++i) buf[i] = BFloat16ToFloat(src[off + i]);
    if (!sink(buf.data(), static_cast<size_t>(n * 4))) return false;
  }
  return true;
}

}  // namespace onnxprobe
