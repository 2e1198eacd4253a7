// The library's commands: what `onnxprobe lint|diff|determinism|fp16|profile|replay|baseline ...`
// and the Python package's functions of the same names do, declared once. A command declares its
// options (option_sink.h), checks them, and executes into a CommandOutput; it never prints. The
// command line parses argv into it (tools/onnxprobe/cli_app.cc); Python hands it keyword
// arguments through ApplyArguments. docs/python.md lists the functions.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "onnxprobe/command/option_sink.h"
#include "onnxprobe/common/status.h"

namespace onnxprobe::cmd {

// The command line's exit codes (Python's errors carry the same as `exit_code`).
enum ExitCode : int {
  kExitOk = 0,
  kExitMismatch = 1,  // a mismatch, a finding at --fail-on, models that differ
  kExitBadInput = 2,  // bad input or usage; a failed write
  kExitRuntime = 3,   // the runtime failed (ErrorCode::kBackend)
};
// The exit code of a library error: kExitRuntime for the runtime's failures, else kExitBadInput
// (kExitOk when `s` is Ok).
int ExitCodeFor(const Status& s);

// A note's kind: said in passing, a warning about the input, where NaN/Inf were found.
enum class NoteKind { kNote, kWarning, kNonfinite };
const char* NoteKindName(NoteKind kind);  // "note", "warning", "nonfinite"
struct CommandNote {
  NoteKind kind = NoteKind::kNote;
  std::string text;
  std::string Line() const;  // "<kind>: <text>"
};

// What one execution produced, besides the files its options named (written by the command).
struct CommandOutput {
  int exit_code = kExitOk;  // or kExitMismatch, or kExitRuntime where a step's runtime failed
  std::string text;         // what the command line prints on stdout
  // The documents rendered, by format: "json" (the schema of the command's --json), "html",
  // "junit", and compare's other formats (report/formats.h); a format the command does not
  // write is absent.
  std::map<std::string, std::string> documents;
  // What the caller should know besides the result; the command line prints each on stderr as
  // "onnxprobe: <kind>: <text>", Python's results list the same lines (DistinctNotes).
  std::vector<CommandNote> notes;
  void Note(std::string text) { notes.push_back({NoteKind::kNote, std::move(text)}); }
  void Warn(std::string text) { notes.push_back({NoteKind::kWarning, std::move(text)}); }
  Status error;  // set when the command failed after producing `text` (e.g. a check aborted)
};

// `notes` as lines ("note: ..."), repeats left out, in order: what every sample of a command notes
// (a symbolic dimension set to 1) is said once. The command line and Python both show notes through
// it.
std::vector<std::string> DistinctNotes(const std::vector<CommandNote>& notes);

// The phases of a long command, named once for the command line's progress line and Python's
// progress callables: "compare" (rows done of rows), "isolate" (isolation runs so far, no
// total), "sample" (input samples done of samples), "capture" (tensors captured of tensors),
// "generate" (decoding steps so far, no total).
enum class Phase { kCompare, kIsolate, kSample, kCapture, kGenerate };
const char* PhaseName(Phase phase);

struct ProgressEvent {
  Phase phase = Phase::kCompare;
  size_t done = 0, total = 0;  // total 0: a count without a known end
  std::string within;          // the step it is part of, e.g. "sample 2/3" ("" none)
};
// Returning false stops the command before its next step (with an error saying so).
using CommandProgress = std::function<bool(const ProgressEvent&)>;

// What the caller's surroundings say about the output.
struct CommandContext {
  CommandProgress progress;  // may be empty
  bool color = false;        // the console text may use ANSI colour (a terminal, NO_COLOR unset)
  // Render the JSON/HTML documents into the output even where no option asked for a file
  // (Python's results carry them); the command line sets false, so a compare renders only what
  // it writes.
  bool documents = true;
};

class Command {
 public:
  virtual ~Command() = default;
  virtual const char* name() const = 0;     // "lint", "baseline check"
  virtual const char* summary() const = 0;  // one line
  virtual std::string footer() const { return ""; }
  virtual void Declare(OptionSink& sink) = 0;
  // Checks across options (and options that would do nothing), before any work.
  virtual Status Validate() { return Status::Ok(); }
  virtual Expected<CommandOutput> Execute(const CommandContext& context) = 0;
};

// A fresh instance of every library command, in --help order.
std::vector<std::unique_ptr<Command>> MakeCommands();
// One by name ("baseline check"); NotFound naming the known ones.
Expected<std::unique_ptr<Command>> MakeCommand(const std::string& name);

// A command's declarations as a table (the Python package builds its functions from it).
struct PositionalInfo {
  std::string name, help;
  bool required = false;
  bool many = false;  // every remaining positional (at least one)
};
struct OptionInfo {
  OptionSpec spec;
  std::string section;
  std::string name;  // MainName(spec.names): "--fail-on"
};
struct CommandInfo {
  std::string name, summary, footer;
  std::vector<PositionalInfo> positionals;
  std::vector<OptionInfo> options;
};
CommandInfo DescribeCommand(Command& command);

// Parses arguments given as values rather than argv: `positionals` in order, `options` as
// (name, value) pairs in order (a name as declared, "--fail-on" or "-o"; "" for a switch; a
// switch with a bare value gets that value when given ""). The same checks and messages as
// the command line: unknown options, a non-repeatable option twice, missing positionals; then
// the command's Validate().
Status ApplyArguments(Command& command, const std::vector<std::string>& positionals,
                      const std::vector<std::pair<std::string, std::string>>& options);

}  // namespace onnxprobe::cmd
