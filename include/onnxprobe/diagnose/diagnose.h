// Diagnosis: from "where" to "why". After localization names the nodes that introduce an error,
// the experiments that confirm or rule out each known cause run on the node alone (the isolated
// model localization kept, fed side A's exact tensors): repeats and thread counts
// (non-determinism), side A's optimization level and the runtime's transformers one group at a
// time (optimizer), side A's runtime (kernel change), the two models' attributes and weights
// (diff), side A's values against float16's range and a quantized tensor's range. Each finding
// says the cause, the evidence (experiment and numbers), the fix (flags for the same comparison
// or a command) and how sure it is. docs/diagnose.md.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "onnxprobe/align/align.h"
#include "onnxprobe/backend/backend.h"
#include "onnxprobe/localize/localize.h"
#include "onnxprobe/model/model_diff.h"
#include "onnxprobe/quant/quant.h"

namespace onnxprobe {

enum class Cause {
  kNondeterminism,    // the node alone gives other values run to run on side B's settings
  kThreadCount,       // ... or with another thread count (deterministic per setting)
  kOptimizer,         // a graph rewrite at side B's optimization level
  kKernelChange,      // side A's runtime (version or provider) computes the node otherwise
  kAttributeChanged,  // the node's attributes or op differ between the two models
  kWeightChanged,     // an initializer the node reads differs between the two models
  kNodesAdded,        // nodes only side B's model has run in the culprit (e.g. a Cast round trip)
  kFloat16Range,      // side A's values beyond what float16 holds where side B computes in it
  kQuantSaturation,   // side A's values beyond the range a quantized tensor of B represents
  kCalibrationRange,  // the graph inputs beyond the range the model was calibrated for
  kTrainingMode,      // a PyTorch module computed as in training (random draws, batch statistics)
  kCapturePrecision,  // PyTorch computed in bfloat16/float16 (autocast), the ONNX model wider
  kFastMathOption,    // a session option of side B trades the node's precision for speed
  kConstantFitted,    // one scalar constant or float attribute of the culprit explains its error
};
// "nondeterminism", "thread-count", "optimizer", "kernel-change", "attribute-changed",
// "weight-changed", "nodes-added", "float16-range", "quantization-saturation", "calibration-range",
// "training-mode", "capture-precision", "fast-math-option", "constant-fitted".
const char* CauseName(Cause c);

// kConfirmed: an experiment reproduces side A's values once the cause is removed, or shows the
// cause at the size of the error; kLikely: the cause is present, its share of the error not shown.
enum class Certainty { kConfirmed, kLikely };
const char* CertaintyName(Certainty c);

struct DiagnosisFix {
  std::string summary;  // what to do, in words
  // set in the same comparison (each replacing a flag of the same name), they apply the fix
  std::vector<std::string> compare_flags;
  std::string command;  // a command to run first ("" none): argv, shell-quoted
  std::string side_b;   // the model side B becomes by the command ("" same)
  // nodes to keep in float: onnxruntime.quantization's nodes_to_exclude, float16's block list
  std::vector<std::string> keep_float_nodes;
};

struct Finding {
  std::string node, op_type, tensor;  // the culprit (side B's node, side A's tensor)
  Cause cause = Cause::kKernelChange;
  Certainty certainty = Certainty::kLikely;
  std::string summary;   // the cause, one sentence
  std::string evidence;  // the experiment and its numbers
  // copies of the node with the same finding (a Loop/Scan body's node in each unrolled
  // iteration, "node@k"); 0: one node
  size_t copies = 0;
  DiagnosisFix fix;
  std::string seen_before;  // an earlier diagnosis of the same symptom (knowledge file), or ""
};

struct Unexplained {
  std::string node, op_type, tensor;
  std::string tried;  // the experiments run and what they showed
};

struct DiagnosisResult {
  bool ran = false;
  std::vector<Finding> findings;         // in the culprits' order
  std::vector<Unexplained> unexplained;  // culprits no experiment explains
  size_t runs = 0;                       // runs of isolated models
  double seconds = 0;
  std::string note;            // why nothing was diagnosed, when that happens
  std::string knowledge_file;  // recorded to, when one was given and written
};

// A side as diagnosis sees it: where it comes from, its runtime and settings.
struct DiagnoseSide {
  std::string path;  // the .onnx model run live, or a dump
  std::string ort_library;
  SessionOptions session;
  const Model* model = nullptr;  // nullptr for a dump or a PyTorch capture
};

struct DiagnoseOptions {
  size_t max_cases = 2;  // introduced culprits diagnosed (the first ones); 0 = none
  int repeats = 3;       // runs of each node alone on side B's settings (non-determinism)
  // JSON knowledge file (schema onnxprobe-knowledge): earlier diagnoses of the same cause on
  // the same op type are cited; this run's findings are added (written atomically). "" = none.
  std::string knowledge_file;
};

struct DiagnoseInput {
  DiagnoseSide a, b;
  const ComparisonResult* comparison = nullptr;
  const LocalizeResult* localization = nullptr;  // with cases (LocalizeOptions::keep_cases)
  const ModelDiff* diff = nullptr;               // two model files; nullptr otherwise
  const QuantReport* quant = nullptr;            // a quantized side B; nullptr otherwise
  // side A is a PyTorch capture: what it recorded about localization's culprits' tensors
  // (ReadCaptureFacts, in culprit order); nullptr otherwise
  const CaptureFacts* capture = nullptr;
  // side A's values of tensors diagnosis reads (the quantized layers' inputs), when kept
  std::vector<NamedTensor> a_values;
};

// Arguments quoted for a POSIX shell where needed, joined by spaces (how a fix is shown).
std::string ShellJoin(const std::vector<std::string>& argv);

// Fails when `path` exists and is not a knowledge file of a version this build reads (it is
// then never replaced); a missing file is fine (it will be created).
Status CheckKnowledgeFile(const std::string& path);

// Runs the experiments. Fails only on bad arguments (a knowledge file that is not one);
// experiments that cannot run are said in `tried` / `note`.
Expected<DiagnosisResult> Diagnose(const DiagnoseInput& in, const DiagnoseOptions& options);

}  // namespace onnxprobe
