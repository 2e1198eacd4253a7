#include "common/clock.h"

#include <ctime>

namespace onnxprobe {

std::string UtcNowIso8601(bool with_zone) {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, with_zone ? "%Y-%m-%dT%H:%M:%SZ" : "%Y-%m-%dT%H:%M:%S", &tm);
  return buf;
}

}  // namespace onnxprobe
