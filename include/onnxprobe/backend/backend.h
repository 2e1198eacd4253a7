// Backends run a model and hand back named tensors. The ONNX Runtime backend loads its shared
// library at run time (dlopen, RTLD_LOCAL), so several ONNX Runtime versions can live in one
// process, each with its own API table. No ONNX Runtime type appears here.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "onnxprobe/common/status.h"
#include "onnxprobe/tensor/tensor.h"

namespace onnxprobe {

// A provider's full ONNX Runtime name from its short or full name in any case ("openvino" ->
// "OpenVINOExecutionProvider"); an unknown name is returned as given.
std::string FullProviderName(const std::string& name);
// Whether `name` (short or full) is ONNX Runtime's CPU provider.
inline bool IsCpuProvider(const std::string& name) {
  return FullProviderName(name) == "CPUExecutionProvider";
}

// Whether two providers are the same one, however spelled ("cpu", "CPU",
// "CPUExecutionProvider"; "" is CPU, the default).
inline bool SameProvider(const std::string& a, const std::string& b) {
  return FullProviderName(a.empty() ? "CPU" : a) == FullProviderName(b.empty() ? "CPU" : b);
}

// ONNX Runtime's graph optimization levels, numbered as its C API numbers them (ORT_ENABLE_ALL is
// 99); ordered, so `level > OptLevel::kBasic` reads as "more than basic".
enum class OptLevel : int { kDisabled = 0, kBasic = 1, kExtended = 2, kAll = 99 };
// The levels, weakest first.
inline constexpr OptLevel kOptLevels[] = {OptLevel::kDisabled, OptLevel::kBasic,
                                          OptLevel::kExtended, OptLevel::kAll};
// "disabled", "basic", "extended", "all".
std::string OptLevelName(OptLevel level);
// The inverse of OptLevelName, also accepting the numbers (0, 1, 2, 99) and "off"; fails naming
// the accepted values.
Expected<OptLevel> ParseOptLevelName(const std::string& s);
// The level as the number dumps, bundles and reports write ("optimization_level": 99), and back;
// any other number fails naming the accepted ones.
inline int OptLevelNumber(OptLevel level) { return static_cast<int>(level); }
Expected<OptLevel> OptLevelFromNumber(double n);

struct SessionOptions {
  // Execution provider by short or full name ("CPU", "CUDA", "TensorrtExecutionProvider").
  // Never falls back silently: an unavailable provider is an error, and CPU fallback is disabled
  // for any other provider.
  std::string provider = "CPU";
  std::map<std::string, std::string> provider_options;
  // A plugin execution provider library (ONNX Runtime 1.22+: RegisterExecutionProviderLibrary):
  // registered once per runtime, and `provider` (one of the providers it registers; the only
  // one when left CPU) is appended on its first device with `provider_options`
  // (SessionOptionsAppendExecutionProvider_V2). Backend::ResolveProvider names it.
  std::string provider_library;
  // Disabled by default: debug the graph as exported.
  OptLevel optimization_level = OptLevel::kDisabled;
  bool sequential = true;
  int intra_op_threads = 0;  // 0 lets the runtime decide
  int inter_op_threads = 0;
  // Prefer plain allocations to a caching arena (CPU: the arena grows in power-of-two chunks and
  // keeps them). An explicit use_arena provider option wins.
  bool low_memory = false;
  // Runtime session configuration entries (ONNX Runtime: AddSessionConfigEntry keys such as
  // "optimization.disable_specified_optimizers"), applied as given.
  std::map<std::string, std::string> config_entries;
  // When set, the runtime writes the graph it will run (after its optimizations) to this path
  // at session creation; large weights go to kOptimizedModelWeightsFile next to it.
  std::string save_optimized_model;
  // Shared libraries of custom operators, registered with every session (their RegisterCustomOps
  // entry point is called). A library that cannot be loaded fails session creation.
  std::vector<std::string> custom_op_libraries;
  // Register onnxprobe's own float64 kernels (domain kExactDomain, graph/exact.h): the sessions
  // of an exact reference (BuildExactModel).
  bool exact_kernels = false;
  // Let the CPU provider run the nodes another provider does not take (ONNX Runtime's CPU
  // fallback). Off by default: such a side would measure a mix of providers without saying so;
  // a comparison lists the nodes either way (FindPlacement, placement.h).
  bool allow_fallback = false;
  // When set, the runtime's profiler records every run of the session; the trace (Chrome
  // trace-event JSON) is written to "<profile_prefix>_<timestamp>.json" by EndProfiling().
  std::string profile_prefix;
  // The session logs errors only: a session of our own inside someone else's process (the
  // preload) must not put the runtime's warnings on that application's stderr.
  bool quiet = false;
};

// The side file, beside SessionOptions::save_optimized_model, that receives its large weights.
inline constexpr const char kOptimizedModelWeightsFile[] = "weights.bin";

// Why a selected tensor has no value.
enum class SkipKind {
  kNone,
  kNotATensor,         // a sequence, map or optional value that does not flatten to a tensor
  kUnsupportedType,    // an element type onnxprobe does not hold (string, ...)
  kFixedByModel,       // a constant a compiling provider folds and cannot expose
  kBreaksCompilation,  // marking it as an output breaks the provider's compilation
  kLast = kBreaksCompilation,
};
// "not_a_tensor", "unsupported_type", "fixed_by_model", "breaks_compilation" ("" for kNone).
const char* SkipKindName(SkipKind kind);

struct SkipReason {
  SkipKind kind = SkipKind::kNone;
  std::string detail;  // what a person reads
  bool empty() const { return kind == SkipKind::kNone; }
};

// A selected tensor with no value, and why.
struct SkippedTensor {
  std::string name;
  SkipReason reason;
  std::string ToString() const { return name + ": " + reason.detail; }  // "name: why"
};

struct RunOutput {
  std::string name;
  Tensor tensor;       // empty when skipped
  SkipReason skipped;  // why no value was captured (sequence, map, string tensor)
};

class BackendSession {
 public:
  virtual ~BackendSession() = default;
  virtual const std::vector<std::string>& input_names() const = 0;
  virtual const std::vector<std::string>& output_names() const = 0;
  // Runs with `inputs` and fetches `outputs` (any subset of output_names(), in that order).
  // Fails with kBackend carrying the runtime's message.
  virtual Expected<std::vector<RunOutput>> Run(
      const std::vector<std::pair<std::string, const Tensor*>>& inputs,
      const std::vector<std::string>& outputs) = 0;
  // Runs writing every fetched output into `outputs`' buffers when their shapes and dtypes are
  // already right (I/O binding to preallocated, reused memory); otherwise (re)allocates them.
  virtual Status RunInto(const std::vector<std::pair<std::string, const Tensor*>>& inputs,
                         const std::vector<std::string>& outputs,
                         std::vector<RunOutput>* results) = 0;
  // Sessions created with SessionOptions::profile_prefix: ends profiling and returns the path of
  // the trace file the runtime wrote. kUnsupported elsewhere; kBackend when the runtime fails.
  virtual Expected<std::string> EndProfiling() {
    return Unsupported("this session was not created with profiling");
  }
};

class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string name() const = 0;
  virtual std::string version() const = 0;
  virtual std::string library_path() const = 0;
  virtual std::vector<std::string> available_providers() const = 0;
  // `model_bytes` is a serialized ModelProto; external data resolves against `model_dir`.
  virtual Expected<std::unique_ptr<BackendSession>> CreateSession(
      const std::string& model_bytes, const std::string& model_dir,
      const SessionOptions& options) = 0;
  // Warnings and errors the runtime logged, oldest first (the library never prints them).
  virtual std::vector<std::string> TakeLog() = 0;
  // `options` with `provider` as the sessions will run it: a plugin library's provider by its
  // registered name (the library's only one when none is named). Fails naming the library when
  // it cannot be registered or does not provide the provider named.
  virtual Expected<SessionOptions> ResolveProvider(const SessionOptions& options) {
    return options;
  }
  // The CPU the sessions run on when it is not this machine's ("aarch64 (qemu-aarch64 -cpu
  // max)": backend/platform.h); "" for this machine.
  virtual std::string platform() const { return ""; }
};

// A runtime's identity as every report names it: "onnxruntime 1.20.1" (name, space, version).
std::string RuntimeLabel(const Backend& backend);
// The same for an ONNX Runtime known by its version alone (a dump's or a child process's).
std::string OrtRuntimeLabel(const std::string& version);

// Loads ONNX Runtime from `library_path`; "" means the default: $ONNXPROBE_ORT_LIBRARY, then the
// library the build was configured with. Fails with kNotFound / kBackend naming the path.
// A library is loaded once per process and shared by every Backend that names it.
Expected<std::shared_ptr<Backend>> LoadOrtBackend(const std::string& library_path = "");
// The path of an ONNX Runtime version installed by the bootstrap (.deps/ort/<version>/lib):
// "1.23.2", or "1.24.1-openvino" for the PyPI onnxruntime-openvino build (OpenVINO provider).
Expected<std::string> OrtLibraryForVersion(const std::string& version);
std::string DefaultOrtLibraryPath();
// The runtime versions installed by the bootstrap whose library has `provider` (short or full
// name), newest first; each library is loaded to ask it.
std::vector<std::string> InstalledOrtVersionsWith(const std::string& provider);
// Where the bootstrap put the runtimes (ONNXPROBE_DEPS_DIR, else this build's .deps); "" in a
// portable build.
std::string RuntimeDepsDir();

}  // namespace onnxprobe
