// Capturing intermediate tensors: input preparation, tensor selection, batched runs under a
// memory budget, and the observer-effect check.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "onnxprobe/backend/backend.h"
#include "onnxprobe/model/model.h"
#include "onnxprobe/tensor/tensor_proto.h"

namespace onnxprobe {

class JsonWriter;

struct InputOptions {
  // .npy ("path" takes the input name from the file stem, or "name=path"), .npz (keys are input
  // names), or TensorProto .pb (name from the proto, else the model's input order).
  std::vector<std::string> files;
  std::map<std::string, Shape> shapes;                      // full shape per input name
  std::map<std::string, int64_t> dim_params;                // symbolic dim name -> value
  std::map<std::string, std::pair<double, double>> ranges;  // per input; "*" applies to all
  uint64_t seed = 0;
  // In-memory tensors by input name (a caller holding arrays, e.g. the Python package), checked
  // like files; an input given both here and in a file fails.
  std::vector<NamedTensor> tensors;
  // A given floating-point input that is NaN/Inf in every value fails (kInvalidArgument) unless
  // this is set: nothing computed from it can differ.
  bool allow_nonfinite = false;
};

// The part of InputOptions an input error is about (for front ends that name their options).
enum class InputField { kNone, kFiles, kShapes, kDimParams };

// What PrepareInputs tells its caller besides the tensors.
struct InputPreparation {
  std::vector<std::string> notes;  // bindings the caller did not spell out
  // one line per given input holding NaN/Inf: which input, what share of its values
  std::vector<std::string> nonfinite_inputs;
  InputField failed = InputField::kNone;  // on failure: what the error is about
};

// Inputs for every graph input, in the model's order: given in memory, loaded from files, or
// seeded random (floats uniform in [-1, 1), ints in [0, 10), bool 0/1, unless a range says
// otherwise). A symbolic dimension that neither `shapes` nor `dim_params` sets is 1, with one note
// per dimension name in `preparation->notes`.
// A bare .npy whose file stem names no input binds to the model's only input (with a note).
// Fails naming the input or file on a missing, extra, duplicated, wrongly-shaped or
// wrongly-typed tensor, an input file that holds nothing, a shape for an input that does not
// exist or is loaded from a file, a dimension name no input has (listing those that exist), and
// a floating-point input that is NaN/Inf in every value (unless allow_nonfinite).
Expected<std::vector<NamedTensor>> PrepareInputs(const Model& model, const InputOptions& options,
                                                 InputPreparation* preparation = nullptr);

struct TensorSelection {
  std::vector<std::string> names;     // exact tensor names
  std::vector<std::string> op_types;  // outputs of nodes with these op types
  std::string regex;                  // ECMAScript regex over tensor names
  // With no criterion set, every capturable tensor is selected.
};
// The selection as a predicate over (tensor name, producing op type). Fails on a bad regex.
Expected<std::function<bool(const std::string& name, const std::string& op_type)>>
MakeTensorMatcher(const TensorSelection& sel);

// Selected tensor names in topological order. Unknown names and bad regexes fail; subgraph
// tensors are reported as not capturable.
Expected<std::vector<std::string>> SelectTensors(const Model& model, const TensorSelection& sel);

struct CapturedTensor {
  std::string name;
  int topo_index = -1;    // producing node's topological index
  std::string node_name;  // producing node
  std::string op_type;
  Tensor tensor;       // empty when skipped
  SkipReason skipped;  // why the value could not be captured
};

class CaptureSink {
 public:
  virtual ~CaptureSink() = default;
  // Receives tensors in topological order; the sink may keep or drop each one.
  virtual Status Consume(CapturedTensor&& t) = 0;
};

struct CaptureOptions {
  SessionOptions session;
  uint64_t max_memory = 0;  // bytes of captured tensors alive at once; 0 = no limit
  bool check_observer = false;
  // With optimizations on, tensors the optimized graph fuses away are not captured (they are
  // listed in CaptureReport::fused) unless this is set: marking them blocks the fusions.
  bool mark_fused_tensors = false;
};

// A graph output that capturing changed (the observer effect): the run with extra outputs (b)
// against the plain run (a).
struct ObserverDifference {
  std::string name;
  bool layout_differs = false;  // dtype or shape differ; then `layout` says how, the rest is 0
  std::string layout;           // e.g. "float32[1, 10] vs float16[1, 10]"
  uint64_t elements = 0, differing = 0;  // elements compared, and those not bit-identical
  double max_abs = 0;                    // max |b - a|; +inf where NaN/Inf differ
  double max_rel = 0;                    // max |b - a| / |a| over elements with a != 0
};

// Writes `skipped` as two keys of the open JSON object: "skipped", lines "name: why" (the
// format's first field), and "skipped_tensors", objects {"name", "kind" (SkipKindName), "reason"}.
void WriteSkipped(const std::vector<SkippedTensor>& skipped, JsonWriter& j);

struct CaptureReport {
  size_t runs = 0;  // inference runs it took (batches)
  size_t captured = 0;
  std::vector<SkippedTensor> skipped;  // selected tensors without a value, and why
  uint64_t estimated_bytes = 0;        // of all selected tensors, from shape inference
  size_t unknown_sizes = 0;            // tensors whose size shape inference could not tell
  std::vector<std::string> fused;      // selected tensors fused away by the runtime's optimizations
  bool observer_checked = false;
  bool observer_identical = false;
  std::vector<ObserverDifference> observer_differences;  // graph outputs that changed
};

using ProgressFn = std::function<void(size_t done, size_t total)>;

// Runs `model` on `backend` and streams the selected tensors into `sink` in topological order,
// splitting them over several runs when they would not fit in `max_memory` at once.
Expected<CaptureReport> Capture(const Model& model, Backend& backend,
                                const std::vector<NamedTensor>& inputs,
                                const std::vector<std::string>& tensors,
                                const CaptureOptions& options, CaptureSink& sink,
                                const ProgressFn& progress = nullptr);

// The one way to open a session with tensors marked: `model` with `marked` appended as graph
// outputs (MarkOutputs; none: the model as it is), on `backend` with `options`. Errors name the
// model's path.
Expected<std::unique_ptr<BackendSession>> OpenMarkedSession(const Model& model, Backend& backend,
                                                            const std::vector<std::string>& marked,
                                                            const SessionOptions& options);

// On a provider other than CPU, marking a tensor as an output can change what the provider
// compiles so that compiling fails (it cannot give a value from inside what it fuses). The
// tensors of `marked` whose marking breaks the compilation, found by halving (each alone fails,
// the rest together compile), once the session with all of `marked` failed with `failed` (the
// caller's own attempt, not repeated). Fails with `failed` when it is no runtime error, the model
// alone does not compile, or no tensor alone breaks it.
Expected<std::vector<std::string>> TensorsBreakingCompilation(
    const Model& model, Backend& backend, const std::vector<std::string>& marked,
    const SessionOptions& options, const Status& failed);
// "N of M tensors marked as outputs break <provider>'s compilation: a, b, ...".
std::string DescribeUnmarkable(const std::vector<std::string>& refused, size_t marked,
                               const std::string& provider);

// Repeated in-memory capture of a fixed tensor set: one session with the tensors marked as
// outputs, run through I/O binding into buffers that are allocated on the first run and reused
// afterwards (no per-run allocation, so the cost is close to a plain inference).
class CaptureSession {
 public:
  static Expected<std::unique_ptr<CaptureSession>> Create(const Model& model, Backend& backend,
                                                          const std::vector<std::string>& tensors,
                                                          const SessionOptions& options);
  // Runs once; outputs() then holds the captured tensors (in `tensors` order) followed by the
  // graph outputs that were not among them. Fails with kBackend on runtime errors.
  Status Run(const std::vector<NamedTensor>& inputs);
  const std::vector<RunOutput>& outputs() const { return outputs_; }

 private:
  std::unique_ptr<BackendSession> session_;
  std::vector<std::string> fetch_;
  std::vector<RunOutput> outputs_;
};

// The node outputs of the graph the runtime runs with `options` after its optimizations (read
// back from the optimized model it writes), plus the tensors of `model` it keeps in its blocked
// channel layout under its own names (see BlockedLayoutTensors) when marking them blocks
// nothing. Tensors of `model` not among them were fused away: capturing them would block the
// fusion. Weights read from a file of more than
// `max_initializer_bytes` (0: no limit; a memory budget; see LiftExternalInitializers) enter that
// session as graph inputs, as writing the optimized model copies each weight: a fusion that
// needs such a weight as a constant is then not seen, and its tensors are captured. Fails with
// kBackend when the runtime rejects the model.
Expected<std::set<std::string>> OptimizedGraphTensors(const Model& model, Backend& backend,
                                                      const SessionOptions& options,
                                                      uint64_t max_initializer_bytes = 0);

// Which of `candidates` a capture at `options`' level keeps: the graph outputs, the tensors the
// optimized graph keeps, and those it keeps in its blocked layout when marking them blocks no
// fusion (see OptimizedGraphTensors). Given `session_options` (no memory budget: one session
// captures them all), the session that captures every kept candidate is made with them, its
// own optimized graph confirming the blocked-layout tensors, and returned; where it does not
// confirm, or without `session_options`, sessions of their own decide and `session` is null.
struct KeptTensors {
  std::set<std::string> kept;
  std::unique_ptr<BackendSession> session;  // outputs: the kept candidates
};
Expected<KeptTensors> KeptForCapture(const Model& model, Backend& backend,
                                     const SessionOptions& options, uint64_t max_initializer_bytes,
                                     const std::vector<std::string>& candidates,
                                     const SessionOptions* session_options);

// Sizes in bytes of tensors, from ONNX shape inference with the given input shapes. Tensors it
// cannot size are absent. Advisory: never fails, returns what it could infer.
std::map<std::string, uint64_t> EstimateTensorBytes(const Model& model,
                                                    const std::vector<NamedTensor>& inputs);

}  // namespace onnxprobe
