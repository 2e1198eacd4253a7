// Option strings as the command line and the Python package give them.
#include "onnxprobe/command/parse.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "onnxprobe/backend/backend.h"

namespace onnxprobe::cmd {

Expected<Shape> ParseShape(const std::string& s) {
  Shape shape;
  if (s.empty() || s == "scalar") return shape;
  std::string cur;
  auto push = [&]() -> Status {
    if (cur.empty()) return InvalidArgument("bad shape '" + s + "' (expected e.g. 1x3x224x224)");
    OP_ASSIGN_OR_RETURN(int64_t v, ParseInt(cur, "shape '" + s + "'"));
    if (v < 0) return InvalidArgument("shape '" + s + "' has a negative dimension");
    shape.push_back(v);
    cur.clear();
    return Status::Ok();
  };
  for (char c : s) {
    if (c == 'x' || c == ',') {
      OP_RETURN_IF_ERROR(push());
    } else {
      cur += c;
    }
  }
  OP_RETURN_IF_ERROR(push());
  OP_RETURN_IF_ERROR(NumElements(shape).status());
  return shape;
}

Expected<std::pair<std::string, Shape>> ParseNamedShape(const std::string& s) {
  auto colon = s.rfind(':');
  if (colon == std::string::npos || colon == 0) {
    return InvalidArgument("bad --shape '" + s + "' (expected NAME:1x3x224x224)");
  }
  OP_ASSIGN_OR_RETURN(Shape shape, ParseShape(s.substr(colon + 1)));
  return std::make_pair(s.substr(0, colon), shape);
}

Expected<std::pair<std::string, std::pair<double, double>>> ParseRange(const std::string& s) {
  auto colon = s.rfind(':');
  std::string name = colon == std::string::npos ? "*" : s.substr(0, colon);
  std::string r = colon == std::string::npos ? s : s.substr(colon + 1);
  auto comma = r.find(',');
  if (comma == std::string::npos)
    return InvalidArgument("bad --range '" + s + "' (expected NAME:LO,HI)");
  char* end1 = nullptr;
  char* end2 = nullptr;
  std::string a = r.substr(0, comma), b = r.substr(comma + 1);
  double lo = std::strtod(a.c_str(), &end1), hi = std::strtod(b.c_str(), &end2);
  if (a.empty() || b.empty() || *end1 || *end2 || !(lo < hi)) {
    return InvalidArgument("bad --range '" + s + "' (expected NAME:LO,HI with LO < HI)");
  }
  return std::make_pair(name, std::make_pair(lo, hi));
}

Expected<uint64_t> ParseBytes(const std::string& s, const std::string& flag) {
  if (s.empty()) return InvalidArgument(flag + ": empty byte size");
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  std::string unit = end;
  double mult = 1;
  if (unit == "" || unit == "B")
    mult = 1;
  else if (unit == "K" || unit == "KB" || unit == "KiB")
    mult = 1024.0;
  else if (unit == "M" || unit == "MB" || unit == "MiB")
    mult = 1024.0 * 1024;
  else if (unit == "G" || unit == "GB" || unit == "GiB")
    mult = 1024.0 * 1024 * 1024;
  else
    return InvalidArgument(flag + ": bad byte size '" + s + "' (expected e.g. 512M or 2G)");
  if (!(v > 0) || v * mult > 9.2e18)
    return InvalidArgument(flag + ": bad byte size '" + s +
                           "' (expected a positive size, e.g. 512M)");
  return static_cast<uint64_t>(v * mult);
}

Expected<int64_t> ParseInt(const std::string& s, const std::string& what) {
  if (s.empty()) return InvalidArgument(what + ": empty number");
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (*end || errno == ERANGE) return InvalidArgument(what + ": '" + s + "' is not an integer");
  return static_cast<int64_t>(v);
}

std::vector<std::string> SplitList(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == ',') {
      if (!cur.empty()) out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

Expected<std::pair<std::string, std::string>> ParseKeyValue(const std::string& s,
                                                            const std::string& what) {
  auto eq = s.find('=');
  if (eq == std::string::npos || eq == 0)
    return InvalidArgument("bad " + what + " '" + s + "' (expected KEY=VALUE)");
  return std::make_pair(s.substr(0, eq), s.substr(eq + 1));
}

Expected<double> ParseTolerance(const std::string& s, const std::string& what) {
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end || !(v >= 0) || !std::isfinite(v))
    return InvalidArgument("bad " + what + " '" + s + "' (expected a number >= 0)");
  return v;
}

Expected<ToleranceRule> ParseToleranceRule(const std::string& s, bool by_op_type,
                                           const std::string& what) {
  auto eq = s.rfind('=');
  auto comma = eq == std::string::npos ? std::string::npos : s.find(',', eq);
  if (eq == std::string::npos || eq == 0 || comma == std::string::npos) {
    return InvalidArgument("bad " + what + " '" + s + "' (expected " +
                           (by_op_type ? "OP" : "PATTERN") + "=ATOL,RTOL)");
  }
  ToleranceRule rule;
  rule.pattern = s.substr(0, eq);
  rule.by_op_type = by_op_type;
  OP_ASSIGN_OR_RETURN(rule.tolerance.atol,
                      ParseTolerance(s.substr(eq + 1, comma - eq - 1), what + " ATOL"));
  OP_ASSIGN_OR_RETURN(rule.tolerance.rtol, ParseTolerance(s.substr(comma + 1), what + " RTOL"));
  TolerancePolicy check;
  check.rules.push_back(rule);
  OP_RETURN_IF_ERROR(check.Validate().WithContext(what));  // a malformed pattern fails here
  return rule;
}

Expected<OptLevel> ParseOptLevel(const std::string& s, const std::string& what) {
  auto level = ParseOptLevelName(s);
  if (!level.ok()) return level.status().WithContext(what);
  return level;
}

}  // namespace onnxprobe::cmd
