// Exit codes, the one-line error and the terminal's progress line.
#include <chrono>
#include <cstdio>

#include "cli.h"

namespace onnxprobe::cli {

int Fail(const Status& s) {
  std::string m = s.message();
  for (char& c : m) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  std::fprintf(stderr, "onnxprobe: error: %s\n", m.c_str());
  return ExitCodeFor(s);
}

void ProgressLine::Update(size_t done, size_t total, const char* unit) {
  if (!enabled_) return;
  auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::steady_clock::now().time_since_epoch())
                 .count();
  if (done != total && now - last_ms_ < 100) return;
  last_ms_ = now;
  std::fprintf(stderr, "\r  %s %zu/%zu%s%s", verb_.c_str(), done, total, *unit ? " " : "", unit);
  counting_ = done != total;  // a line on the terminal until Done() (or the last count) clears it
  if (done == total) std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
}

void ProgressLine::Count(size_t n, const char* unit) {
  if (!enabled_) return;
  auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
                 std::chrono::steady_clock::now().time_since_epoch())
                 .count();
  if (now - last_ms_ < 100) return;
  last_ms_ = now;
  counting_ = true;
  std::fprintf(stderr, "\r\033[K  %s %zu %s", verb_.c_str(), n, unit);
  std::fflush(stderr);
}

void ProgressLine::Done() {
  if (!enabled_ || !counting_) return;
  counting_ = false;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
}

}  // namespace onnxprobe::cli
