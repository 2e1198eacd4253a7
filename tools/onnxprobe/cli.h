// The onnxprobe command line: argv parsed into one of the library's commands (their options are
// declared in onnxprobe/command/), what it returns printed, exit codes. CLI11 stays behind
// cmd::OptionSink: only cli_app.cc includes it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>

#include "onnxprobe/command/command.h"
#include "onnxprobe/common/status.h"

namespace onnxprobe::cli {

// The exit codes are the library's (command.h): kExitOk, kExitMismatch, kExitBadInput,
// kExitRuntime; ExitCodeFor maps an error to one.
using cmd::ExitCodeFor;
using cmd::kExitBadInput;
using cmd::kExitMismatch;
using cmd::kExitOk;
using cmd::kExitRuntime;
// Prints "onnxprobe: error: <message>" on one line and returns the exit code.
int Fail(const Status& s);
// Routes stdout through a stream that remembers the OS reason of its first failed write.
void GuardStdout();
// Flushes stdout: Ok, or an IoError "stdout: write failed (<reason>)" if any write to it failed.
Status FinishStdout();

// Runs a library command (onnxprobe/command/command.h) once its options are parsed and checked:
// its notes on stderr, its text on stdout, its error on stderr after the text; returns the exit
// code (cli_library.cc).
int RunLibraryCommand(cmd::Command& command);

// Parses argv into one command and runs it (cli_app.cc).
int RunCli(int argc, char** argv);

// "\r  <verb> 12/168 tensors" on a terminal, at most ten times a second; erased when done.
class ProgressLine {
 public:
  ProgressLine(bool enabled, std::string verb) : enabled_(enabled), verb_(std::move(verb)) {}
  ~ProgressLine() {
    if (counting_) Done();
  }
  void Update(size_t done, size_t total, const char* unit = "tensors");
  // What the line says before its count ("sample 3/8: comparing").
  // A new verb is a new phase: its first count shows at once.
  void SetVerb(std::string verb) {
    if (verb == verb_) return;
    verb_ = std::move(verb);
    last_ms_ = -1000;
  }
  // A phase whose length is not known ahead: "<verb> N <unit>", cleared by Done().
  void Count(size_t n, const char* unit);
  void Done();

 private:
  bool enabled_;
  std::string verb_;
  int64_t last_ms_ = -1000;
  bool counting_ = false;  // a line is on the terminal (Count, or Update before its end)
};

}  // namespace onnxprobe::cli
