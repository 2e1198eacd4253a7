// Option strings as the command line and the Python package give them (fuzzed by
// fuzz/fuzz_cli_specs.cc). Messages name the option through `what`/`flag`.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "onnxprobe/backend/backend.h"
#include "onnxprobe/common/status.h"
#include "onnxprobe/compare/compare.h"
#include "onnxprobe/tensor/tensor.h"

namespace onnxprobe::cmd {

// "1x3x224x224" or "1,3,224,224"
Expected<Shape> ParseShape(const std::string& s);
// "name:1x3x224x224"
Expected<std::pair<std::string, Shape>> ParseNamedShape(const std::string& s);
// "name:lo,hi" (name may be '*')
Expected<std::pair<std::string, std::pair<double, double>>> ParseRange(const std::string& s);
// "512M", "2G", "1048576"
Expected<uint64_t> ParseBytes(const std::string& s, const std::string& flag);
Expected<int64_t> ParseInt(const std::string& s, const std::string& what);
// "a,b,c"
std::vector<std::string> SplitList(const std::string& s);
// "key=value"
Expected<std::pair<std::string, std::string>> ParseKeyValue(const std::string& s,
                                                            const std::string& what);
// The one tolerance parser: "X" (a number >= 0) for --atol/--rtol/--rel-eps, and
// "PATTERN=ATOL,RTOL" (split at the last '=') for per-tensor and per-op overrides.
Expected<double> ParseTolerance(const std::string& s, const std::string& what);
Expected<ToleranceRule> ParseToleranceRule(const std::string& s, bool by_op_type,
                                           const std::string& what);
// "disabled|basic|extended|all" or 0/1/2/99
Expected<OptLevel> ParseOptLevel(const std::string& s, const std::string& what);

}  // namespace onnxprobe::cmd
