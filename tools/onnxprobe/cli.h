// Shared pieces of the onnxprobe command line: argument cursor, spec parsers, exit codes.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "onnxprobe/backend.h"
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
Expected<std::pair<std::string, std::string>> ParseKeyValue(const std::string& s,
                                                            const std::string& what);
std::string HumanBytes(uint64_t b);

// Flags shared by commands. Each returns true when it consumed the current flag; a parse error
// is reported through `st`.
bool ParseInputFlag(Args& args, InputOptions* o, Status* st);
// Session flags; `prefix` is "" for both sides, or "--a-" / "--b-" for one side.
// `touched` records which fields the flag set so per-side values can override shared ones.
struct SessionFlags {
  SessionOptions session;
  std::string ort_lib, ort_version;
  std::set<std::string> touched;
};
bool ParseSessionFlag(Args& args, const std::string& prefix, SessionFlags* o, Status* st);
// Applies `side` over `shared` for the fields `side` touched.
SessionFlags MergeSessionFlags(const SessionFlags& shared, const SessionFlags& side);
// Resolves --ort-lib / --ort-version to a library path ("" = default).
Expected<std::string> ResolveOrtLibrary(const SessionFlags& f);
Expected<int> ParseOptLevel(const std::string& s);

// "\r  <verb> 12/168 tensors" on a terminal, at most ten times a second; erased when done.
class ProgressLine {
 public:
  ProgressLine(bool enabled, std::string verb) : enabled_(enabled), verb_(std::move(verb)) {}
  void Update(size_t done, size_t total);

 private:
  bool enabled_;
  std::string verb_;
  int64_t last_ms_ = -1000;
};

int RunInspect(Args& args);
int RunRun(Args& args);
int RunCompare(Args& args);
int RunReplay(Args& args);
int RunDeterminism(Args& args);

}  // namespace onnxprobe::cli
