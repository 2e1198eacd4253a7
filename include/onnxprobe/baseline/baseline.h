// A precision baseline for CI: the outputs (and chosen intermediates) of a model on a set of
// input samples, the thresholds to judge them by and the environment they were made in, saved
// once and checked on every build. `onnxprobe baseline save|check` is these two calls.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "onnxprobe/capture/samples.h"
#include "onnxprobe/pipeline/engine.h"
#include "onnxprobe/pipeline/sample_compare.h"

namespace onnxprobe {

// What a run's numbers may depend on besides the model's inputs.
struct Environment {
  std::string onnxprobe_version;
  std::string runtime_version;         // "1.23.2"
  std::string runtime_library;         // path of the shared library
  std::string runtime_library_sha256;  // "" when the file could not be read
  SessionOptions session;              // provider, options, level, threads, execution mode
  std::string cpu_model;               // /proc/cpuinfo "model name" ("" when unknown)
  std::vector<std::string> cpu_flags;  // /proc/cpuinfo "flags", sorted
  int cpu_count = 0;                   // logical CPUs (a runtime's default thread count follows it)
  std::string os;                      // uname and /etc/os-release PRETTY_NAME
  std::string model_sha256;
};

enum class EnvField {
  kOnnxprobeVersion,
  kRuntimeVersion,
  kRuntimeLibrary,  // the library's SHA-256 (a changed path with the same bytes is no change)
  kProvider,
  kProviderOptions,
  kOptimizationLevel,
  kExecutionMode,
  kIntraOpThreads,
  kInterOpThreads,
  kCpuModel,
  kCpuFlags,
  kCpuCount,
  kOs,
  kModel,  // the model file's SHA-256
};
const char* EnvFieldName(EnvField f);  // "runtime_version", "cpu_flags", ...

struct EnvChange {
  EnvField field;
  std::string baseline, current;  // cpu_flags: the flags only the baseline / only now has
};

// The environment a run with `backend` and `session` has on this machine. Never fails: what
// cannot be read is left empty.
Environment SnapshotEnvironment(const Backend& backend, const SessionOptions& session,
                                const std::string& model_sha256);
// What differs between `baseline` and `current`, in EnvField order.
std::vector<EnvChange> DiffEnvironments(const Environment& baseline, const Environment& current);

struct BaselineSampleEntry {
  std::string name;
  SampleSource source = SampleSource::kSeed;
  uint64_t seed = 0;               // kSeed
  std::vector<std::string> files;  // kFiles: as given when saved
  std::string dump;                // the sample's dump folder, relative to the baseline folder
};

// baseline.json, the index of a baseline folder ("format": "onnxprobe-baseline").
struct Baseline {
  std::string dir;          // the folder it was read from (or written to)
  std::string model_path;   // as given when saved
  bool model_kept = false;  // the folder holds a copy of the model (model.onnx)
  std::string created;      // UTC, ISO 8601
  Environment environment;
  TolerancePolicy policy;
  TensorSelection selection;         // chosen intermediates (graph outputs are always stored)
  std::vector<std::string> tensors;  // stored tensor names, topological order
  std::vector<BaselineSampleEntry> samples;
};

constexpr const char* kBaselineFile = "baseline.json";
constexpr const char* kBaselineModelFile = "model.onnx";

// Reads and validates `dir`/baseline.json and checks that every sample's dump exists. Fails with
// kNotFound (no folder, no baseline.json, a missing dump) or kCorrupt (malformed), naming the file.
Expected<Baseline> ReadBaseline(const std::string& dir);

struct BaselineSaveRequest {
  std::string model_path;
  std::string output;  // the baseline folder; replaced only when the new one is complete
  SampleOptions samples;
  TensorSelection selection;  // intermediates to store besides the graph outputs
  bool all_tensors = false;   // store every intermediate: a failing check localizes from them
  bool keep_model = false;    // copy the model into the folder: a failing check can re-run it
  SessionOptions session;
  std::string ort_library;  // "" = the default runtime
  TolerancePolicy policy;   // the thresholds a check applies
  uint64_t max_memory = 0;  // captured bytes alive at once; 0 = no limit
  // Called after each sample with (samples done, samples); returning false stops the save there
  // with an error naming the sample (the caller cancelled; nothing is written).
  std::function<bool(size_t, size_t)> on_sample;
};

struct BaselineSaveReport {
  Baseline baseline;
  uint64_t bytes_written = 0;
  double seconds = 0;
  std::vector<std::string> notes;  // how inputs were bound when the request did not spell it out
};

// Captures every sample and writes the baseline folder atomically (a temporary sibling, then
// rename). Fails like Model::Load, ListInputSamples, PrepareInputs, SelectTensors (naming the
// sample), LoadOrtBackend and Capture (kBackend); nothing appears at `output` on failure.
Expected<BaselineSaveReport> SaveBaseline(const BaselineSaveRequest& request);

struct BaselineCheckRequest {
  std::string model_path;
  std::string baseline_dir;
  // Run with these session options instead of the baseline's (a deliberate environment change,
  // reported as one); unset: the baseline's.
  bool session_given = false;
  SessionOptions session;
  std::string ort_library;  // "" = the default runtime
  bool localize = true;     // on a failing sample, name the tensor and node where it diverges
  // Failing samples localized, in sample order (a rerun captures two full runs per sample).
  size_t max_localized_samples = 1;
  uint64_t max_memory = 0;
  // Only the samples at positions index, index + count, ... of the baseline (a job array's task;
  // `onnxprobe merge` joins the shards' JSON reports, docs/shard.md).
  SampleShard shard;
  // Called after each sample with (samples done, samples of this shard); returning false stops
  // the check there with an error naming the sample (the caller cancelled).
  std::function<bool(size_t, size_t)> on_sample;
};

// How a failing sample was localized.
enum class LocalizeMethod {
  kNotNeeded,      // the sample passed
  kStoredTensors,  // isolation against the intermediates the baseline stored
  kRerun,          // a full capture of the baseline's model and runtime against the current run
  kUnavailable,    // neither (`note` says why)
  kSkipped,        // beyond max_localized_samples
};
const char* LocalizeMethodName(LocalizeMethod m);

struct SampleLocalization {
  LocalizeMethod method = LocalizeMethod::kNotNeeded;
  std::string note;
  // The first tensor (topological order) beyond tolerance, and its producing node.
  std::string first_diverging, first_diverging_node;
  std::vector<Culprit> introducing;  // nodes that make the error alone (isolated)
  bool has_rerun = false;
  CompareReport rerun;  // kRerun: the full comparison (reference model and runtime vs now)
};

struct SampleCheck {
  std::string name;
  CompareReport report;  // the stored dump (side A) against the current run (side B)
  std::map<std::string, double> row_seconds;  // per compared tensor: time since the previous
  double seconds = 0;
  SampleLocalization localization;
  bool passed() const { return report.passed(); }
};

struct BaselineCheckReport {
  Baseline baseline;
  // A shard's report: which shard, each sample's position among the baseline's samples, and how
  // many failing samples a single process would localize (what merge keeps localized).
  SampleShard shard;
  std::vector<size_t> positions;
  size_t localize_samples = 0;
  std::string model_path;
  Environment current;
  std::vector<EnvChange> changes;
  std::vector<SampleCheck> samples;
  std::vector<TensorAggregate> tensors;  // baseline.tensors order
  size_t failed_samples = 0;
  bool aborted = false;  // a run failed mid-way: samples hold what was checked
  Status abort_status;
  double seconds = 0;
  bool passed() const { return !aborted && failed_samples == 0; }
};

// Re-runs every sample of the baseline and compares it with the stored tensors under the
// baseline's thresholds; reports environment changes; localizes failing samples (see
// docs/baseline.md). Fails like ReadBaseline, Model::Load, LoadOrtBackend, and with kBackend
// when the runtime rejects the model before anything was compared.
Expected<BaselineCheckReport> CheckBaseline(const BaselineCheckRequest& request);

}  // namespace onnxprobe
