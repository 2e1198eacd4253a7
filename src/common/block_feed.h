// Internal: feeding bytes to a 64-byte block function through a carry buffer (MD5, SHA-256).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace onnxprobe {

// Completes the buffered partial block first, runs whole blocks straight from `p`, and keeps
// the tail in `buf` for the next call.
template <typename BlockFn>
void FeedBlocks(uint8_t (&buf)[64], size_t* buf_len, const uint8_t* p, size_t size,
                BlockFn&& block) {
  if (*buf_len > 0) {
    size_t take = std::min(size, 64 - *buf_len);
    std::memcpy(buf + *buf_len, p, take);
    *buf_len += take;
    p += take;
    size -= take;
    if (*buf_len < 64) return;
    block(buf);
    *buf_len = 0;
  }
  for (; size >= 64; p += 64, size -= 64) block(p);
  if (size > 0) {
    std::memcpy(buf, p, size);
    *buf_len = size;
  }
}

}  // namespace onnxprobe
