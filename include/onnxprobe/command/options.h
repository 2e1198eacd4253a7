// Options shared by commands, declared once so every command spells and checks them alike:
// inputs, samples, shards, tensor selection, memory budgets, session settings, tolerances and
// the outputs' guards.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "onnxprobe/backend/backend.h"
#include "onnxprobe/capture/capture.h"
#include "onnxprobe/capture/output_guard.h"
#include "onnxprobe/capture/samples.h"
#include "onnxprobe/command/option_sink.h"
#include "onnxprobe/command/parse.h"
#include "onnxprobe/compare/compare.h"

namespace onnxprobe::cmd {

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
// A switch (`flags` such as "--force" or "-q,--quiet", no value) that sets `*on`.
void DeclareSwitch(OptionSink& sink, const std::string& flags, bool* on, const std::string& help);
// A flag taking one string (a path, a name) into `*value`; `value_name` is shown in help (FILE).
void DeclareString(OptionSink& sink, const std::string& flags, const std::string& value_name,
                   std::string* value, const std::string& help);
// --max-memory SIZE into `bytes`; `help` says what the budget covers.
void DeclareMaxMemory(OptionSink& sink, uint64_t* bytes, const std::string& help);
// Names the sample option an error from ListInputSamples is about.
Status NameSampleFlag(const Status& s, const SampleOptions& samples);

// Paths named by --input (for the output guard: outputs never replace an input).
std::vector<std::string> InputFilePaths(const InputFlags& flags);

// Session settings. `prefix` is "" (both sides), "a-" or "b-" (one side; hidden in --help).
enum class SessionField {
  kProvider,
  kProviderLibrary,
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
  std::string platform;  // --platform: the side runs on that CPU under qemu (backend/platform.h)
  std::string remote;    // --remote: the side runs in the worker this command starts on a device
  std::set<SessionField> touched;
  std::vector<std::string> given;  // flag names as typed, in order
};
void DeclareSessionOptions(OptionSink& sink, const std::string& prefix, SessionFlags* flags);
// `side` over `shared` for the fields `side` touched.
SessionFlags MergeSessionFlags(const SessionFlags& shared, const SessionFlags& side);
// Sides that name a provider (not from a plugin library) and no runtime (--ort-lib,
// --ort-version, --platform, --remote), when the default runtime lacks that provider: every side
// that names no runtime gets the newest installed runtime that has it (so that the sides differ
// in provider only). Returns the note that says so; "" when nothing changed (a provider no
// installed runtime has fails when its session is made, naming what is installed).
Expected<std::string> PickRuntimeForProviders(const std::vector<SessionFlags*>& sides,
                                              const std::string& default_library);
// --ort-lib / --ort-version / --platform to a runtime locator: a library path ("" = default), or
// "@<platform>@<library>" for a side on another CPU (LoadBackend, backend/platform.h).
// `default_library`: the runtime when the flags name none (a caller's own, e.g. the Python
// package's; "" the library's default).
Expected<std::string> ResolveOrtLibrary(const SessionFlags& f,
                                        const std::string& default_library = "");

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
Status CheckOutput(const std::string& flag, const std::string& path, const OutputArtifact& artifact,
                   const std::vector<std::string>& inputs, bool force);
// The artifact of one of compare's report formats ("json", "html", "junit": report/formats.h),
// for commands that write the same documents (baseline check, merge).
OutputArtifact SinkArtifact(const std::string& format);
// Refuses two outputs of one run on the same path (e.g. --json and --html both r.out).
Status CheckDistinctOutputs(const std::vector<std::pair<std::string, std::string>>& flag_paths);

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
// What goes to stdout: the console `text`, or the JSON where a bare --json replaces it; a
// --json=FILE is written (atomically) first.
Expected<std::string> ConsoleWithJson(const JsonOutput& out, const std::string& text,
                                      const std::string& json);
// The FILE of `--json FILE` in compare, determinism, fp16 and baseline check, whose console report
// holds stdout: "-" and "" are refused, naming the option.
Status SetJsonFile(const std::string& value, std::string* out);
// The same for any report file's flag (compare's formats, report/formats.h).
Status SetReportFile(const std::string& flag, const std::string& value, std::string* out);
// Names the option an input error is about ("--dim: ...").
Status NameInputFlag(const Status& s, InputField field);

}  // namespace onnxprobe::cmd
