#include "onnxprobe/format.h"

#include <cstdio>

namespace onnxprobe {

std::string FormatNumber(double v, int digits) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.*g", digits, v);
  return buf;
}

std::string FormatMs(double ms) {
  if (!(ms >= 100) || ms >= 1e7) return FormatNumber(ms) + " ms";  // small, or nan/inf
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.0f ms", ms);
  return buf;
}

}  // namespace onnxprobe
