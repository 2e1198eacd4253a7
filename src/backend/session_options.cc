// Names of session settings and runtimes, one table for every report, bundle and flag.
#include <array>
#include <utility>

#include "onnxprobe/backend/backend.h"

namespace onnxprobe {
namespace {

constexpr std::array<std::pair<int, const char*>, 4> kOptLevels{
    {{0, "disabled"}, {1, "basic"}, {2, "extended"}, {99, "all"}}};

}  // namespace

std::string OptLevelName(int level) {
  for (const auto& [n, name] : kOptLevels) {
    if (n == level) return name;
  }
  return std::to_string(level);
}

Expected<int> ParseOptLevelName(const std::string& s) {
  for (const auto& [n, name] : kOptLevels) {
    if (s == name || s == std::to_string(n)) return n;
  }
  if (s == "off") return 0;
  return InvalidArgument("optimization level '" + s +
                         "' is not one of disabled, basic, extended, all (or 0, 1, 2, 99)");
}

std::string RuntimeLabel(const Backend& backend) {
  return backend.name() + " " + backend.version();
}

std::string OrtRuntimeLabel(const std::string& version) { return "onnxruntime " + version; }

}  // namespace onnxprobe
