#include "onnxprobe/format.h"

#include <cstdio>

namespace onnxprobe {

std::string FormatNumber(double v, int digits) {
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.*g", digits, v);
  return buf;
}

}  // namespace onnxprobe
