#include "common/user_regex.h"

namespace onnxprobe {
namespace {

// Repeats are unrolled into one NFA state per copy; libstdc++ gives up at 100000 states anyway.
constexpr size_t kMaxRepeat = 100000;

// The length of the digit run starting at `i` and, when it is short enough to matter, its value.
size_t DigitRun(const std::string& s, size_t i, size_t* value) {
  size_t n = 0;
  *value = 0;
  while (i + n < s.size() && s[i + n] >= '0' && s[i + n] <= '9') {
    if (n < 7) *value = *value * 10 + static_cast<size_t>(s[i + n] - '0');
    ++n;
  }
  return n;
}

// Empty when every number std::regex would read as an integer is small, else why not.
std::string CheckNumbers(const std::string& p) {
  bool in_class = false;
  bool in_brace = false;
  for (size_t i = 0; i < p.size(); ++i) {
    char c = p[i];
    if (c == '\\' && i + 1 < p.size()) {
      size_t v = 0;
      size_t n = in_class || in_brace ? 0 : DigitRun(p, i + 1, &v);
      if (n > 2 || (n > 0 && p[i + 1] != '0' && v > 99))
        return "back-reference \\" + p.substr(i + 1, std::min<size_t>(n, 12)) + " is above \\99";
      ++i;  // the escaped character is literal
      continue;
    }
    if (in_class) {
      if (c == ']') in_class = false;
      continue;
    }
    if (in_brace) {
      if (c == '}') in_brace = false;
      size_t v = 0;
      size_t n = DigitRun(p, i, &v);
      if (n > 6 || v > kMaxRepeat) return "repeat count above " + std::to_string(kMaxRepeat);
      if (n > 0) i += n - 1;
      continue;
    }
    if (c == '[') in_class = true;
    if (c == '{') in_brace = true;
  }
  return "";
}

}  // namespace

Expected<std::regex> CompileUserRegex(const std::string& pattern, const std::string& what) {
  std::string why = CheckNumbers(pattern);
  if (!why.empty()) return InvalidArgument("bad " + what + " '" + pattern + "': " + why);
  try {
    return std::regex(pattern, std::regex::ECMAScript);
  } catch (const std::regex_error& e) {
    return InvalidArgument("bad " + what + " '" + pattern + "': " + e.what());
  } catch (const std::exception& e) {  // std::length_error or bad_alloc from a huge expansion
    return InvalidArgument("bad " + what + " '" + pattern + "': " + e.what());
  }
}

}  // namespace onnxprobe
