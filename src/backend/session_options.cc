// Names of session settings and runtimes, one table for every report, bundle and flag.
#include <string>

#include "onnxprobe/backend/backend.h"
#include "onnxprobe/common/format.h"

namespace onnxprobe {
std::string OptLevelName(OptLevel level) {
  switch (level) {
    case OptLevel::kDisabled:
      return "disabled";
    case OptLevel::kBasic:
      return "basic";
    case OptLevel::kExtended:
      return "extended";
    case OptLevel::kAll:
      return "all";
  }
  return std::to_string(OptLevelNumber(level));
}

Expected<OptLevel> ParseOptLevelName(const std::string& s) {
  for (OptLevel level : kOptLevels) {
    if (s == OptLevelName(level) || s == std::to_string(OptLevelNumber(level))) return level;
  }
  if (s == "off") return OptLevel::kDisabled;
  return InvalidArgument("optimization level '" + s +
                         "' is not one of disabled, basic, extended, all (or 0, 1, 2, 99)");
}

Expected<OptLevel> OptLevelFromNumber(double n) {
  for (OptLevel level : kOptLevels) {
    if (n == OptLevelNumber(level)) return level;
  }
  return InvalidArgument("optimization level " + FormatNumber(n) + " is not one of 0, 1, 2, 99");
}

const char* SkipKindName(SkipKind kind) {
  switch (kind) {
    case SkipKind::kNone:
      return "";
    case SkipKind::kNotATensor:
      return "not_a_tensor";
    case SkipKind::kUnsupportedType:
      return "unsupported_type";
    case SkipKind::kFixedByModel:
      return "fixed_by_model";
    case SkipKind::kBreaksCompilation:
      return "breaks_compilation";
  }
  return "";
}

std::string RuntimeLabel(const Backend& backend) {
  return backend.name() + " " + backend.version();
}

std::string OrtRuntimeLabel(const std::string& version) { return "onnxruntime " + version; }

}  // namespace onnxprobe
