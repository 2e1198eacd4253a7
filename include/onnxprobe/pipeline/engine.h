// The whole comparison as one library call: open both sides, prepare the inputs they share,
// align a PyTorch capture, compare (every tensor, or by bisection), localize, and return one
// complete report. `onnxprobe compare` is this call plus reporters; a C++ or Python caller gets
// exactly what the command line gets.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "onnxprobe/align/align.h"
#include "onnxprobe/capture/determinism.h"
#include "onnxprobe/diagnose/diagnose.h"
#include "onnxprobe/engine/comparison.h"
#include "onnxprobe/graph/exact.h"
#include "onnxprobe/localize/explain.h"
#include "onnxprobe/localize/localize.h"
#include "onnxprobe/profile/latency.h"
#include "onnxprobe/profile/placement.h"
#include "onnxprobe/quant/quant.h"

namespace onnxprobe {

struct SideRequest {
  std::string path;  // .onnx model (run live), dump folder or .npz (incl. a PyTorch capture)
  SessionOptions session;
  // The caller chose session options or a runtime for this side. A dump side then fails with
  // kInvalidArgument: the options would silently do nothing there.
  bool session_given = false;
  std::string ort_library;  // "" = default; live sides only
};

struct CompareRequest {
  SideRequest a, b;              // A is the reference, B the side under test
  InputOptions inputs;           // shared by both sides; a dump side brings its own (then: empty)
  bool inputs_given = false;     // the caller set `inputs`: an error when a dump brings inputs
  CompareJob job;                // tolerances, selection, pairing, memory budget
  std::string mapping_file;      // renamed tensors (ReadTensorMapping); merged under job.rename
  std::string graph_model;       // graph for the frontier and isolation when both sides are dumps
  std::string noise_floor_file;  // per-tensor floors from `determinism` (WriteNoiseFloor)
  size_t bisect_per_run = 0;     // > 0: bisection with this many tensors per run
  bool localize = true;          // isolate candidates when something fails (needs a live side B)
  LocalizeOptions localize_options;
  // Said in the report's notes: how the request was chosen (a runtime picked for a provider).
  std::vector<std::string> notes;
  // Run live sides in child processes: a runtime that crashes (segfault in a provider or a
  // custom op) ends the comparison with kBackend and the rows compared so far, instead of
  // taking the caller's process down.
  bool isolate_runtime = false;
  // Both sides run one model on one runtime and differ only in optimization level: also walk
  // the optimization ladder and name the graph transformers that change the outputs.
  bool explain_optimizations = false;
  // A float side A against its quantized version B: pairing by structure, the quantization-aware
  // rule, per-layer isolation (replaces the generic localization) and an exclusion list.
  QuantOptions quant;
  // Each live side's latency (median of this many plain runs after one warm-up, in a session of
  // its own after the comparison) and peak memory; 0 = not measured (the default: it opens each
  // side's model again, which costs more than a small model's whole comparison). Skipped with
  // isolate_runtime (measuring would load the runtime into this process).
  int latency_runs = 0;
  // > 0: a side's measured runs stop once they have taken this long in all, at least one (a
  // large model's run takes seconds: its sample then costs about what a small model's does);
  // 0: exactly latency_runs. The CLI sets 0 when --latency-runs is given.
  double latency_max_ms = 2000;
  RowCallback on_row;  // progress, called once per compared row
  // After localization of a failure, the experiments that say why (diagnose/diagnose.h) on the
  // first `diagnose.max_cases` introduced culprits; 0 = none. Skipped with isolate_runtime (the
  // experiments load the runtimes into this process).
  DiagnoseOptions diagnose;
  // Add the exact reference (capture/exact_reference.h) of side A's model (else B's): every row
  // shows both sides' distance from it and is judged with ExactRoundingBudget (`--reference
  // exact`). Runs in this process on the CPU provider of side A's runtime (else B's).
  bool exact_reference = false;
};

// What a live side costs to run: plain inference, no tensors captured.
struct SideResources {
  bool measured = false;  // false for dumps, and when latency_runs is 0
  LatencyStats latency;
  PeakMemory memory;
};

struct InputInfo {
  std::string name;
  DType dtype = DType::kFloat32;
  Shape shape;
};

enum class InputOrigin { kGenerated, kFiles, kRecorded };  // seeded random, given, from a dump
const char* InputOriginName(InputOrigin o);

// The complete result. Each stage's result is kept as it returned it, but for the roles:
// `comparison.rows` carry the final ones (the verdicts localization or the quantized layers'
// isolation settled, applied by the pipeline with ApplyRoles(), frontier recomputed).
struct CompareReport {
  ComparisonResult comparison;
  LocalizeResult localization;
  std::vector<InputInfo> inputs;
  InputOrigin input_origin = InputOrigin::kGenerated;
  uint64_t input_seed = 0;              // when generated
  std::vector<AlignmentRow> alignment;  // a PyTorch capture on side A (empty otherwise)
  ParityReport parity;             // a PyTorch capture's parameters against the ONNX initializers
  std::vector<std::string> notes;  // what the caller should know (e.g. how an input bound)
  // Given inputs that hold NaN/Inf, one line each with the share (InputPreparation): every
  // report states them first, since the tensors computed from them compare NaN with NaN.
  std::vector<std::string> nonfinite_inputs;
  // On a FAIL whose failing tensors are all inherited (no row introduces the error), where the
  // error is born instead or why that cannot be said; "" otherwise.
  std::string origin_note;
  // Two different model files: what differs between them statically (DiffModels summary), so a
  // changed node that never shows numerically on these inputs is still listed. "" otherwise.
  std::string model_diff;
  // Two model files: the rewrites recognized while pairing by meaning (engine/rewrites.h), one
  // line each ("BatchNormalization 'bn' folded into B's Conv 'conv': ..."), and by kind.
  std::vector<std::string> rewrites;
  std::map<std::string, size_t> rewrite_kinds;
  bool optimizations_explained = false;
  ExplainResult optimizations;
  QuantReport quant;          // active() when B was compared as a quantized version of A
  DiagnosisResult diagnosis;  // ran when a failure was localized and diagnosis was asked for
  // The graph's name (side A's model, else side B's, else the --model graph); "" for two dumps.
  std::string graph_name;
  // The graph outputs of side A's model (else B's); empty when both sides are dumps.
  std::vector<std::string> graph_outputs;
  SideResources resources_a, resources_b;
  // A live side on another provider than CPU with CPU fallback allowed: which nodes the CPU
  // provider ran (provider empty otherwise).
  Placement placement_a, placement_b;
  // With CompareRequest::exact_reference: how each node's float64 value was computed.
  std::optional<ExactModel> exact;
  bool passed() const {
    return !comparison.aborted && comparison.failures == 0 && comparison.unpaired_outputs.empty() &&
           comparison.nan_outputs.empty();
  }
};

// Runs the request. Fails with kInvalidArgument / kNotFound / kCorrupt on bad input (naming the
// file, tensor or input), kBackend when a runtime cannot load or rejects a model before anything
// was compared. A side failing mid-way returns a report with comparison.aborted set.
Expected<CompareReport> Compare(const CompareRequest& request);

}  // namespace onnxprobe
