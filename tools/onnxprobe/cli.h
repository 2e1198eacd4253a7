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

#include "onnxprobe/backend.h"
#include "onnxprobe/capture.h"
#include "onnxprobe/compare.h"
#include "onnxprobe/output_guard.h"
#include "onnxprobe/samples.h"
#include "onnxprobe/status.h"

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

// One option of a command, declared without seeing CLI11.
struct OptionSpec {
  std::string names;       // "-o,--output"
  std::string value_name;  // "PATH"; empty: a switch that takes no value
  std::string help;
  bool repeatable = false;  // given twice is an error unless set (switches may repeat)
  bool hidden = false;      // parsed but not listed in --help
  // Non-empty: a switch whose value is optional and attached with '=' ("--json" or
  // "--json=FILE"); `parse` gets this value when none is attached. A separate next argument is
  // never taken as its value, so positionals after it stay positionals.
  std::string bare_value = "";
};

// Where a command declares its options. `parse` runs once per occurrence, in command-line
// order, with the value ("" for a switch); an error it returns ends parsing (exit 2).
class OptionSink {
 public:
  virtual ~OptionSink() = default;
  // Options declared after this are listed under `title` in --help.
  virtual void Section(const std::string& title) = 0;
  virtual void Add(const OptionSpec& spec, std::function<Status(const std::string&)> parse) = 0;
  // A positional argument, in declaration order.
  virtual void Positional(const std::string& name, const std::string& help, std::string* out,
                          bool required) = 0;
  // Every remaining positional argument, at least one (declared last).
  virtual void Positionals(const std::string& name, const std::string& help,
                           std::vector<std::string>* out) = 0;
};

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

std::unique_ptr<Command> MakeInspectCommand();
std::unique_ptr<Command> MakeRunCommand();
std::unique_ptr<Command> MakeCompareCommand();
std::unique_ptr<Command> MakeReplayCommand();
std::unique_ptr<Command> MakeMergeCommand();
std::unique_ptr<Command> MakeDeterminismCommand();
std::unique_ptr<Command> MakeLintCommand();
std::unique_ptr<Command> MakeDiffCommand();
std::unique_ptr<Command> MakeFp16Command();
std::unique_ptr<Command> MakeBaselineSaveCommand();   // "baseline save"
std::unique_ptr<Command> MakeBaselineCheckCommand();  // "baseline check"
std::unique_ptr<Command> MakeProfileCommand();
std::unique_ptr<Command> MakeImportPolygraphyCommand();
std::unique_ptr<Command> MakeGenerateCommand();

// Parses argv into one command and runs it (cli_app.cc).
int RunCli(int argc, char** argv);

// --- option strings (cli_util.cc; fuzzed by fuzz/fuzz_cli_specs.cc) ---

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
Expected<int> ParseOptLevel(const std::string& s, const std::string& what);

// --- options shared by commands (cli_options.cc) ---

// --input, --shape, --dim, --range, --seed. `given` records any of the first four.
struct InputFlags {
  InputOptions options;
  std::vector<std::string> given;  // flags given, in order ("--input", "--dim", ...)
};
void DeclareInputOptions(OptionSink& sink, InputFlags* flags);
// --inputs DIR and --samples N: several input samples (with the --input options as their base).
void DeclareSampleOptions(OptionSink& sink, SampleOptions* samples);
// --shard I/N into `shard` (`given` set): only every N-th sample from the I-th; `which` names the
// samples split ("with --inputs/--samples", "of the baseline").
void DeclareShardOption(OptionSink& sink, const std::string& which, SampleShard* shard,
                        bool* given);
// --tensors, --op-types, --regex into `selection`; `restricts` names what they narrow down
// ("side A's tensors") where they restrict a default of every tensor, "" where they select.
void DeclareSelectionOptions(OptionSink& sink, TensorSelection* selection,
                             const std::string& restricts = "");
// --max-memory SIZE into `bytes`; `help` says what the budget covers.
void DeclareMaxMemory(OptionSink& sink, uint64_t* bytes, const std::string& help);
// Names the sample option an error from ListInputSamples is about.
Status NameSampleFlag(const Status& s, const SampleOptions& samples);

// Paths named by --input (for the output guard: outputs never replace an input).
std::vector<std::string> InputFilePaths(const InputFlags& flags);

// Session settings. `prefix` is "" (both sides), "a-" or "b-" (one side; hidden in --help).
enum class SessionField {
  kProvider,
  kFallback,
  kProviderOptions,
  kOptLevel,
  kIntra,
  kInter,
  kParallel,
  kOrt,
  kCustomOps,
  kConfig
};
struct SessionFlags {
  SessionOptions session;
  std::string ort_lib, ort_version;
  std::set<SessionField> touched;
  std::vector<std::string> given;  // flag names as typed, in order
};
void DeclareSessionOptions(OptionSink& sink, const std::string& prefix, SessionFlags* flags);
// `side` over `shared` for the fields `side` touched.
SessionFlags MergeSessionFlags(const SessionFlags& shared, const SessionFlags& side);
// --ort-lib / --ort-version to a library path ("" = default).
Expected<std::string> ResolveOrtLibrary(const SessionFlags& f);

// --atol, --rtol, --absolute-atol, --rel-eps, --tol, --op-tol, --judge: overrides of a policy.
struct ToleranceFlags {
  std::optional<double> atol, rtol, rel_eps;
  std::optional<JudgeBy> judge;
  bool absolute_atol = false;
  std::vector<ToleranceRule> rules;  // command-line order (later rules win)
  void ApplyTo(TolerancePolicy* policy) const;
};
void DeclareToleranceOptions(OptionSink& sink, ToleranceFlags* flags);

// The library's output guard for the output of one flag: the message names the flag, and says
// when --force would allow it.
Status CheckOutput(const std::string& flag, const std::string& path, OutputKind kind,
                   const std::vector<std::string>& inputs, bool force);

// `--json[=FILE]` of the commands that print (inspect, lint, diff, profile, run): bare, the JSON
// replaces the console output on stdout; with =FILE (or =- for stdout) it goes to FILE, written
// atomically, and the console output stays. compare, determinism, fp16 and baseline check take
// `--json FILE` (= or a space), so `--json=FILE` writes a file in every command.
struct JsonOutput {
  bool on = false;
  std::string file;  // empty: stdout
};
OptionSpec JsonOption(const std::string& help);
Status SetJsonOutput(const std::string& value, JsonOutput* out);
// The file may be written (CheckOutput, kind kCommandJson); Ok for stdout or off.
Status CheckJsonOutput(const JsonOutput& out, const std::vector<std::string>& inputs, bool force);
// Prints `text` or writes it to the file.
Status EmitJson(const JsonOutput& out, const std::string& text);
// The FILE of `--json FILE` in compare, determinism, fp16 and baseline check, whose console report
// holds stdout: "-" and "" are refused, naming the option.
Status SetJsonFile(const std::string& value, std::string* out);
// The console `text` (unless a bare --json replaces it), then the JSON where it goes.
Status PrintWithJson(const JsonOutput& out, const std::string& text, const std::string& json);
// Names the option an input error is about ("--dim: ...").
Status NameInputFlag(const Status& s, InputField field);

// Refuses two outputs of one run on the same path (e.g. --json and --html both r.out).
Status CheckDistinctOutputs(const std::vector<std::pair<std::string, std::string>>& flag_paths);

// "\r  <verb> 12/168 tensors" on a terminal, at most ten times a second; erased when done.
class ProgressLine {
 public:
  ProgressLine(bool enabled, std::string verb) : enabled_(enabled), verb_(std::move(verb)) {}
  ~ProgressLine() {
    if (counting_) Done();
  }
  void Update(size_t done, size_t total);
  // What the line says before its count ("sample 3/8: comparing").
  void SetVerb(std::string verb) { verb_ = std::move(verb); }
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
