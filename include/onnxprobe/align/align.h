// Aligning PyTorch module outputs with ONNX tensors. Pairing is structural, built on what the
// torch exporter guarantees: a node's scope name is the call stack of modules that made it
// ("/layer1/layer1.0/conv1/Conv"; "_k" marks the k-th extra call of one scope), and a module
// call's outputs are the tensors produced inside its scope and consumed outside it (or graph
// outputs). The capture (python/onnxprobe_torch) records every module call: its scope, parent,
// inputs, which outputs are the very same tensor as an earlier one, and whether the module is a
// BatchNorm. Values only choose among structural candidates; a pair found by value alone is
// advisory (never a failure, never a culprit). Anything else is reported unaligned.
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "onnxprobe/compare/compare.h"
#include "onnxprobe/model/model.h"
#include "onnxprobe/side/side.h"

namespace onnxprobe {

enum class AlignMethod {
  kScope,         // produced inside the module call's scope and handed on from it
  kContainer,     // the very same tensor as an output of a submodule (or one of its inputs)
  kBnFolded,      // a BatchNorm without nodes: folded into the convolution before it
  kFusedNormAct,  // a BatchNorm (subclass) whose normalization was folded into the convolution
                  // before it; paired by the nodes left in its scope (e.g. its activation)
  kNoNodes,       // a call without ONNX nodes, paired by the tensor its consumers read
  kCallInput,     // a call's argument made by functional code: the one tensor of its dtype and
                  // shape that the call's nodes read from outside
  kFunctional,    // the output of a torch function the call ran itself (inside the module): the
                  // tensor of its dtype and shape made by a compatible op among the call's own
                  // nodes, in call order
  kValue,         // by values alone (advisory: never a failure or a culprit)
  kNone,          // no counterpart (fused away, no nodes, or not decidable)
};
const char* AlignMethodName(AlignMethod m);  // "scope", "container", "bn-folded", ...

struct AlignmentRow {
  std::string torch_name;  // the capture's tensor name (module path, _k for repeated calls)
  std::string module, module_type;
  int call_index = 0, output_index = 0;
  std::string onnx_tensor;  // "" when there is no counterpart
  AlignMethod method = AlignMethod::kNone;
  // 1 for structural pairs; below 1 when values chose among several structural candidates or
  // paired alone (then: cosine similarity)
  double confidence = 0;
  std::string note;  // why there is no counterpart, or what the exporter changed
  // a value computed inside the call (a torch function it ran itself), not one of its
  // boundaries: serves localization, not counted in StructuralCoverage
  bool inside = false;
};

enum class ParityIssue {
  kDiffers,       // an initializer named after a parameter holds other values
  kShapeDiffers,  // same name, other dtype or shape
};
const char* ParityIssueName(ParityIssue k);  // "differs", "shape-differs"

// One PyTorch parameter (or buffer) whose ONNX initializer disagrees: "node X's weight differs
// from module Y's parameter Z".
struct ParityFinding {
  ParityIssue issue = ParityIssue::kDiffers;
  std::string initializer;  // the ONNX initializer
  std::string node;         // the node that reads it (through static nodes such as a Transpose)
  std::string op_type;
  // every node reading it with computed data, in graph order (several for a weight tied between
  // modules, e.g. an embedding and an output projection); `node` is the first
  std::vector<std::string> readers;
  std::string parameter;              // the PyTorch name
  std::string module;                 // the module call it belongs to ("" when not known)
  uint64_t count = 0, differing = 0;  // elements; elements beyond the allowed difference
  double max_abs = 0;
  std::string message;  // one line naming all of the above
};

struct ParityReport {
  bool ran = false;       // the capture holds parameters
  size_t parameters = 0;  // saved parameters and buffers
  size_t by_name = 0;     // found as an initializer of the same name and compared
  size_t folded = 0;      // convolutions with a BatchNorm folded in, recomputed and compared
  size_t renamed = 0;     // initializers found to hold a parameter under another name (same
                          // bytes, reshaped or transposed; or all but a few elements: a finding)
  std::vector<ParityFinding> findings;
};

// A module call's part of the ONNX graph: what to run to isolate the call as a whole when
// PyTorch exposes no boundary inside it (attention internals, functional code).
struct ModuleSpan {
  std::string module;
  int call_index = 0;
  std::vector<std::string> torch_outputs;  // the capture's tensors of this call (alignment rows)
  std::vector<int> nodes;           // topological indices of its ONNX nodes, sub-calls included
  std::vector<std::string> inputs;  // ONNX tensors it reads from outside (not constants)
  std::vector<std::string> inputs_torch;  // per input: the capture tensor or model input holding
                                          // its value; "" when PyTorch has none
};

struct Alignment {
  std::vector<AlignmentRow> rows;
  std::map<std::string, std::string> rename;  // torch name -> ONNX tensor (advisory ones too)
  // torch names paired by value alone: compare them for information, never judge them
  std::set<std::string> advisory;
  // PyTorch parameters against ONNX initializers, checked before any comparison of activations.
  // A finding is a culprit in its own right (the node reading the initializer); the rows of the
  // module it belongs to carry it in their note.
  ParityReport parity;
  // Module calls whose ONNX nodes are known, in call order.
  std::vector<ModuleSpan> modules;
};

// Structural share: boundary rows (not `inside`) paired by structure (not by value alone, not
// unaligned) over all boundary rows.
double StructuralCoverage(const Alignment& alignment);

// Everything at once, for a PyTorch capture (`torch_side`, a dump from python/onnxprobe_torch)
// against a live ONNX side whose inputs are set: structural pairing from the capture's module
// calls, BatchNorm folding, candidates checked by dtype and shape and, where several remain,
// chosen by values, then an advisory value search for what is left, and parameter parity when
// the capture holds its parameters. Runs `onnx_side` a few times, each run holding at most
// `max_memory` bytes of its tensors (0: no limit). Fails when the capture's manifest cannot be
// read or a side fails to produce tensors.
Expected<Alignment> AlignTorchCapture(Side& torch_side, Side& onnx_side, uint64_t max_memory = 0);

struct ModuleIsolation {
  std::string output_torch, output_onnx;  // the call's output that was compared
  size_t nodes = 0;                       // ONNX nodes run
  Tolerance tolerance;                    // the policy's for that output
  TensorMetrics metrics;                  // the isolated output against PyTorch's
  bool introduced = false;                // beyond tolerance on its own
  std::string reason;                     // why it failed (the judge's reason)
};

// Runs a module call's ONNX nodes alone on `onnx_side`'s runtime (RunAlone, side/run_alone.h),
// fed with PyTorch's values at the call's inputs, and judges the call's first aligned output
// against PyTorch's by the comparison's one rule (JudgeRow: the policy's tolerance for that
// tensor, judging mode, relative eps and the kernel options): does the module make the error by
// itself? Fails with kNotFound when an input has no PyTorch value or no output of the call is
// aligned, kBackend when the runtime rejects the subgraph.
Expected<ModuleIsolation> IsolateModuleCall(Side& torch_side, Side& onnx_side,
                                            const Alignment& alignment, const ModuleSpan& span,
                                            const TolerancePolicy& policy,
                                            const CompareOptions& kernel = {});

// The module path of a torch-exported node name; "" when the name carries no scope.
// `call` receives the call index of the last component ("relu_2" -> 2) when `modules` knows
// "relu" but not "relu_2". (Static module paths only: the capture's scope names are exact.)
std::string ScopeModulePath(const std::string& node_name, const std::vector<std::string>& modules,
                            int* call);

// Structural pairing from the side's tensor metadata alone (no values, no dataflow): the form
// an older capture without module calls allows. Ambiguous candidates stay unaligned.
Alignment AlignByScope(const std::vector<SideTensor>& torch_tensors, const Model& onnx);

// Kept for callers of the two-step API: recomputes `*alignment` with AlignTorchCapture (the
// alignment passed in is replaced). Pairs found by value alone are in `rename` and `advisory`.
Status AlignByValue(Side& torch_side, Side& onnx_side, Alignment* alignment,
                    double min_cosine = 0.999);

// A module call of a PyTorch capture that computed as in training although the companion ran the
// model in eval mode: its own code drew random numbers, or it changed its own buffers.
struct TrainingRemnant {
  std::string module;
  bool rng_draws = false;
  std::vector<std::string> buffers_written;
};
// What a PyTorch capture recorded about how some of its tensors were computed (the diagnosis's
// evidence for a PyTorch side), one entry per tensor asked for.
struct CaptureFacts {
  // the remnant calls among the calls whose code made the tensor (its producing call and every
  // call under it; for an argument made between module calls, the parent's own code and the
  // children it called before)
  std::vector<std::vector<TrainingRemnant>> remnants;
  // the dtype PyTorch computed the tensor in where the capture saved another ("bfloat16"), or ""
  std::vector<std::string> torch_dtypes;
  std::map<std::string, std::string> autocast;  // device -> dtype, on at capture
  // where the tensor comes from in the user's code: "module <path> called at <file>:<line>"
  // (the module call whose code made it, and the line that called that module), or ""
  std::vector<std::string> origins;
};
// Empty records for tensors the capture does not know and for older captures. Fails when the
// capture's manifest cannot be read.
Expected<CaptureFacts> ReadCaptureFacts(const std::string& capture_path,
                                        const std::vector<std::string>& tensors);

}  // namespace onnxprobe
