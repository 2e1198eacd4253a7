// Every option string the command line parses: shapes, ranges, sizes, key=value, integers,
// tolerances and optimization levels.
#include <string>

#include "onnxprobe/command/parse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace onnxprobe::cmd;  // NOLINT
  std::string s(reinterpret_cast<const char*>(data), size);
  (void)ParseShape(s);
  (void)ParseNamedShape(s);
  (void)ParseRange(s);
  (void)ParseBytes(s, "fuzz");
  (void)ParseKeyValue(s, "fuzz");
  (void)ParseInt(s, "fuzz");
  (void)SplitList(s);
  (void)ParseTolerance(s, "fuzz");
  (void)ParseToleranceRule(s, false, "fuzz");
  (void)ParseToleranceRule(s, true, "fuzz");
  (void)ParseOptLevel(s, "fuzz");
  return 0;
}
