#include "preload_config.h"

#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

namespace onnxprobe::preload {
namespace {

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  size_t start = 0;
  while (start <= s.size()) {
    size_t end = s.find(',', start);
    if (end == std::string::npos) end = s.size();
    if (end > start) out.push_back(s.substr(start, end - start));
    start = end + 1;
  }
  return out;
}

bool ParseCount(const char* s, uint64_t* out) {
  if (s == nullptr || *s == 0) return true;  // unset: keep the default
  char* end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(s, &end, 10);
  if (*end != 0 || errno == ERANGE || s[0] == '-') return false;
  *out = v;
  return true;
}

bool ParseSize(const char* s, uint64_t* out) {
  if (s == nullptr || *s == 0) return true;
  char* end = nullptr;
  double v = std::strtod(s, &end);
  std::string unit = end;
  double mult = 0;
  if (unit.empty() || unit == "B") mult = 1;
  if (unit == "K" || unit == "KB" || unit == "KiB") mult = 1024.0;
  if (unit == "M" || unit == "MB" || unit == "MiB") mult = 1024.0 * 1024;
  if (unit == "G" || unit == "GB" || unit == "GiB") mult = 1024.0 * 1024 * 1024;
  if (mult == 0 || !(v > 0) || v * mult > 9.2e18) return false;
  *out = static_cast<uint64_t>(v * mult);
  return true;
}

// Creates the folder if needed and proves a file can be made in it.
bool CheckWritable(const std::string& dir, std::string* why) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    *why = "cannot create folder '" + dir + "' (" + ec.message() + ")";
    return false;
  }
  std::string probe = dir + "/.onnxprobe-write-check-XXXXXX";
  int fd = mkstemp(probe.data());
  if (fd < 0) {
    *why = "cannot write in folder '" + dir + "' (" + std::strerror(errno) + ")";
    return false;
  }
  close(fd);
  unlink(probe.c_str());
  return true;
}

}  // namespace

std::string SelectionVariables(const TensorSelection& selection) {
  std::string out;
  auto add = [&](bool set, const char* name) {
    if (set) out += (out.empty() ? "" : "/") + std::string(name);
  };
  add(!selection.names.empty(), "ONNXPROBE_TENSORS");
  add(!selection.op_types.empty(), "ONNXPROBE_OP_TYPES");
  add(!selection.regex.empty(), "ONNXPROBE_REGEX");
  return out.empty() ? "ONNXPROBE_CAPTURE" : out;
}

ConfigState ReadPreloadConfig(PreloadConfig* c, ConfigError* error) {
  const char* dir = getenv("ONNXPROBE_CAPTURE");
  if (dir == nullptr || *dir == 0) return ConfigState::kOff;
  c->dir = dir;
  auto bad = [&](const char* var, std::string message) {
    error->variable = var;
    error->message = std::move(message);
    return ConfigState::kBad;
  };
  auto value = [](const char* var) -> std::string {
    const char* v = getenv(var);
    return v == nullptr ? "" : v;
  };
  if (!ParseCount(getenv("ONNXPROBE_EVERY"), &c->every) || c->every == 0)
    return bad("ONNXPROBE_EVERY", "'" + value("ONNXPROBE_EVERY") + "' is not a count >= 1");
  if (!ParseCount(getenv("ONNXPROBE_MAX_RUNS"), &c->max_runs))
    return bad("ONNXPROBE_MAX_RUNS", "'" + value("ONNXPROBE_MAX_RUNS") + "' is not a count");
  if (!ParseSize(getenv("ONNXPROBE_MAX_MEMORY"), &c->max_memory))
    return bad("ONNXPROBE_MAX_MEMORY",
               "'" + value("ONNXPROBE_MAX_MEMORY") + "' is not a byte size (e.g. 512M, 2G)");
  c->selection.names = SplitList(value("ONNXPROBE_TENSORS"));
  c->selection.op_types = SplitList(value("ONNXPROBE_OP_TYPES"));
  c->selection.regex = value("ONNXPROBE_REGEX");
  auto matcher = MakeTensorMatcher(c->selection);
  if (!matcher.ok())
    return bad("ONNXPROBE_REGEX", "'" + c->selection.regex + "' is not a valid regular expression");
  std::string why;
  if (!CheckWritable(c->dir, &why)) return bad("ONNXPROBE_CAPTURE", why);
  return ConfigState::kOn;
}

}  // namespace onnxprobe::preload
