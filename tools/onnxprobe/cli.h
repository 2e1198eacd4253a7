// Shared pieces of the onnxprobe command line: the command interface, option declarations,
// spec parsers and exit codes. CLI11 stays behind OptionSink: only cli_app.cc includes it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "onnxprobe/command/command.h"
#include "onnxprobe/command/options.h"
#include "onnxprobe/common/status.h"

namespace onnxprobe::cli {

enum ExitCode { kExitOk = 0, kExitMismatch = 1, kExitBadInput = 2, kExitBackend = 3 };

// Maps a library error to the documented exit code (backend failures 3, all else 2).
int ExitCodeFor(const Status& s);
// Prints "onnxprobe: error: <message>" on one line and returns the exit code.
int Fail(const Status& s);
// Prints "onnxprobe: note: <message>" on one line (stderr).
void Note(const std::string& message);
// Routes stdout through a stream that remembers the OS reason of its first failed write.
void GuardStdout();
// Flushes stdout: Ok, or an IoError "stdout: write failed (<reason>)" if any write to it failed.
Status FinishStdout();

// The library's option declarations and shared options (onnxprobe/command/), used here by name.
using cmd::CheckDistinctOutputs;
using cmd::CheckJsonOutput;
using cmd::CheckOutput;
using cmd::DeclareInputOptions;
using cmd::DeclareMaxMemory;
using cmd::DeclareSampleOptions;
using cmd::DeclareSelectionOptions;
using cmd::DeclareSessionOptions;
using cmd::DeclareShardOption;
using cmd::DeclareToleranceOptions;
using cmd::InputFilePaths;
using cmd::InputFlags;
using cmd::JsonOption;
using cmd::JsonOutput;
using cmd::MergeSessionFlags;
using cmd::NameInputFlag;
using cmd::NameSampleFlag;
using cmd::OptionSink;
using cmd::OptionSpec;
using cmd::ParseBytes;
using cmd::ParseInt;
using cmd::ParseKeyValue;
using cmd::ParseOptLevel;
using cmd::ParseShape;
using cmd::ParseTolerance;
using cmd::ResolveOrtLibrary;
using cmd::SessionFlags;
using cmd::SetJsonFile;
using cmd::SetJsonOutput;
using cmd::SplitList;
using cmd::ToleranceFlags;

// A subcommand: declares its options, checks them once parsed, then runs.
class Command {
 public:
  virtual ~Command() = default;
  virtual const char* name() const = 0;
  virtual const char* summary() const = 0;  // one line for `onnxprobe --help`
  virtual std::string footer() const { return ""; }
  virtual void Declare(OptionSink& sink) = 0;
  // Checks across options (and options that would do nothing), before any work. Exit 2 on error.
  virtual Status Validate() { return Status::Ok(); }
  // The library call, the reports and the exit code.
  virtual int Run() = 0;
};

// A library command (onnxprobe/command/command.h) run by the command line: its text on stdout,
// its notes and error on stderr, its exit code.
std::unique_ptr<Command> AdaptLibraryCommand(std::unique_ptr<cmd::Command> command);

// Parses argv into one command and runs it (cli_app.cc).
int RunCli(int argc, char** argv);

// Prints `text` or writes it to the file.
Status EmitJson(const JsonOutput& out, const std::string& text);
// The console `text` (unless a bare --json replaces it), then the JSON where it goes.
Status PrintWithJson(const JsonOutput& out, const std::string& text, const std::string& json);

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
  bool counting_ = false;  // a Count() line is on the terminal
};

}  // namespace onnxprobe::cli
