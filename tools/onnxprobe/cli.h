// Shared pieces of the onnxprobe command line: argument cursor, spec parsers, exit codes.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "onnxprobe/capture.h"
#include "onnxprobe/status.h"

namespace onnxprobe::cli {

enum ExitCode { kExitOk = 0, kExitMismatch = 1, kExitBadInput = 2, kExitBackend = 3 };

// Maps a library error to the documented exit code (backend failures 3, all else 2).
int ExitCodeFor(const Status& s);
// Prints "onnxprobe: error: <message>" on one line and returns the exit code.
int Fail(const Status& s);

// Walks argv; flags take their value as the next argument or after '='.
class Args {
 public:
  Args(int argc, char** argv, int start);
  bool Done() const { return i_ >= args_.size(); }
  const std::string& Peek() const { return args_[i_]; }
  // True (and consumes it) when the current argument is `flag` or `flag=...`.
  bool Flag(const std::string& flag);
  // The value of the flag just matched; fails when missing.
  Expected<std::string> Value();
  std::string Next() { return args_[i_++]; }

 private:
  std::vector<std::string> args_;
  size_t i_ = 0;
  std::string pending_;
  bool has_pending_ = false;
  std::string flag_;
};

// "1x3x224x224" or "1,3,224,224"
Expected<Shape> ParseShape(const std::string& s);
// "name:1x3x224x224"
Expected<std::pair<std::string, Shape>> ParseNamedShape(const std::string& s);
// "name:lo,hi" (name may be '*')
Expected<std::pair<std::string, std::pair<double, double>>> ParseRange(const std::string& s);
// "512M", "2G", "1048576"
Expected<uint64_t> ParseBytes(const std::string& s);
Expected<int64_t> ParseInt(const std::string& s, const std::string& what);
// "a,b,c"
std::vector<std::string> SplitList(const std::string& s);
// "key=value"
Expected<std::pair<std::string, std::string>> ParseKeyValue(const std::string& s, const std::string& what);
std::string HumanBytes(uint64_t b);

int RunInspect(Args& args);
int RunRun(Args& args);

}  // namespace onnxprobe::cli
