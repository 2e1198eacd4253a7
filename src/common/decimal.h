// Whole-string decimal parsing for numbers read from user files (tensor names, file names,
// external-data fields): no exceptions, no sign, no trailing text, no wrap-around.
#pragma once

#include <cstdint>
#include <string>

namespace onnxprobe {

// True and *out set when `s` is 1-20 decimal digits whose value is at most `max`.
inline bool ParseDecimal(const std::string& s, uint64_t max, uint64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    uint64_t d = static_cast<uint64_t>(c - '0');
    if (d > max || v > (max - d) / 10) return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

}  // namespace onnxprobe
