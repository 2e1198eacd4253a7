// The main job: stream two sides tensor by tensor in topological order, pair them, measure,
// judge, and find where error is born (the frontier) versus where it is only inherited.
#pragma once

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "onnxprobe/compare/compare.h"
#include "onnxprobe/side/side.h"

namespace onnxprobe {

struct TensorResult;

struct CompareJob {
  TolerancePolicy policy;
  CompareOptions kernel;
  uint64_t max_memory = 0;  // bytes of both sides' tensors alive at once; 0 = no limit
  std::map<std::string, std::string> rename;  // side A name -> side B name (renamed tensors)
  // Side A names never paired by an equal name (without a `rename` entry they are only in A),
  // with why: a rewrite gave B's tensor of that name another meaning (engine/rewrites.h).
  std::map<std::string, std::string> distrusted;
  // Two model files: intermediate tensors paired by meaning may be reshaped copies of each other
  // (CompareOptions::reshaped_ok); graph outputs keep their shapes as the contract.
  bool reshaped_ok = false;
  TensorSelection selection;              // restricts side A's tensors; empty = all
  std::vector<std::string> topk_tensors;  // force argmax/top-k on these
  const Model* graph = nullptr;           // graph for the frontier when both sides are dumps
  // Side A names whose pairing is unconfirmed (found by value alone): their rows are measured
  // and shown but never fail and are never isolated.
  std::set<std::string> advisory;
  // Side A name -> the rows that confirm it (a value inside a PyTorch module call -> the call's
  // outputs): a failing row none of whose confirming rows fails, where at least one was
  // compared, becomes advisory (a pairing the module's boundary does not confirm never fails).
  std::map<std::string, std::vector<std::string>> confirm_by;
  // Pairing chosen by structure (a quantized side B, quant/): only `rename` pairs, A's other
  // tensors are only in A (never paired by an equal name), and `judge` replaces JudgeRow.
  bool rename_only = false;
  std::function<void(const Tensor& a, const Tensor& b, const TolerancePolicy& policy,
                     const CompareOptions& kernel, TensorResult* row)>
      judge;
  // The caller's cancellation (a progress callback that raised, Ctrl-C in a notebook): checked
  // before each batch of tensors and each isolated run; true ends the comparison with
  // "comparison stopped by the caller" (kInvalidArgument). Empty: never stops.
  std::function<bool()> stop;
  bool Stopped() const { return stop && stop(); }
  // The exact reference (capture/exact_reference.h: the model computed in float64 on the same
  // inputs), fetched with side A's names: each row then records both sides' distance from it
  // (TensorResult::exact_error_a/b) and is allowed twice the smaller one on top of its tolerance
  // (ExactRoundingBudget, compare.h). Null: no exact reference.
  Side* exact = nullptr;
};

enum class Role { kPass, kIntroduced, kInherited };
const char* RoleName(Role r);

// kNotCompared: a side could not provide a value (sequence, map, string tensor; `reason` says
// why). kAdvisory: measured, but the pairing is unconfirmed, so the row never fails.
enum class RowState { kCompared, kNotCompared, kAdvisory };
const char* RowStateName(RowState s);

struct TensorResult {
  std::string name;    // side A's name
  std::string name_b;  // side B's name (differs when renamed)
  std::string node, op_type;
  int topo_index = -1;
  Tolerance tolerance;
  TensorMetrics metrics;
  RowState state = RowState::kCompared;
  bool pass = true;
  bool within_tolerance = true;  // the measurement alone (an advisory row passes regardless)
  std::string reason;            // why it failed, or why it was not compared
  Grade grade = Grade::kExcellent;
  Role role = Role::kPass;
  // error / allowed error under the judging mode (1 = at the limit); 0 when not compared
  double tolerance_ratio = 0;
  // With an exact reference (CompareJob::exact): max |side - exact| over the values both hold
  // (magnitudes of 1e30 and more left out, as from the tolerance's scale); -1 when not measured.
  double exact_error_a = -1, exact_error_b = -1;
  // Every value is NaN on both sides: nothing to compare (state kNotCompared, `reason` says so).
  bool all_nan = false;
};
// "a", "b" or "tie" (equal distance from exact); "" when the row has no exact measurement.
const char* CloserToExact(const TensorResult& row);

// Over the rows with an exact measurement: how often each side is the closer one, and each
// side's largest distance from exact relative to the row's scale (max |exact|, at least 1e-30).
struct ExactCloseness {
  size_t rows = 0, closer_a = 0, closer_b = 0, ties = 0;
  double worst_a = 0, worst_b = 0;  // max over rows of error / scale
  std::string worst_a_row, worst_b_row;
};

// The one rule that judges a pair of tensors, used by the comparison, isolation and replay:
// measures B against A under row->tolerance and the policy's judging mode and relative eps, and
// sets metrics, within_tolerance, pass (always true for advisory rows), reason, grade and
// tolerance_ratio.
void JudgeRow(const Tensor& a, const Tensor& b, const TolerancePolicy& policy,
              const CompareOptions& kernel, TensorResult* row);
// True when the row's tensor is bit-exact on both sides (rows not compared count as exact).
bool RowIdentical(const TensorResult& row);

// A node (or the smallest subgraph around it) run alone on side B's runtime, fed with side A's
// exact input tensors, and compared with side A's output: the test of "introduced here".
// What names a culprit: its node run alone (isolation), or, against a PyTorch capture, a weight
// the node reads that differs from the module's parameter (parity: certain without any run).
enum class Evidence { kIsolation, kParity };
const char* EvidenceName(Evidence e);

// A culprit's error explained by one constant of its isolated nodes: with `constant` (a scalar
// input's tensor name, or "attribute <name>") of `node` set to `fitted` instead of `value`, the
// nodes reproduce side A's value within tolerance, and no other node's constant does.
struct ConstantFit {
  std::string node, op_type, constant;
  double value = 0, fitted = 0;
};

struct Culprit {
  Evidence evidence = Evidence::kIsolation;
  int row = -1;  // into ComparisonResult::rows
  std::string tensor, node, op_type;
  std::vector<std::string> nodes;            // nodes run in isolation (the culprit's node last)
  std::vector<std::string> nodes_only_in_b;  // of those, nodes whose outputs side A lacks
  bool isolated = false;                     // isolation ran
  bool introduced = false;                   // isolated error beyond tolerance
  std::string error;                         // why isolation could not run
  TensorMetrics metrics;                     // isolated output vs side A's output
  std::string reason;
  double accumulated_max_rel = 0;  // the comparison's max relative error for the tensor
  // A PyTorch side A: where the tensor comes from in the user's code ("module <path> called at
  // <file>:<line>", the companion's record), else ""
  std::string origin;
  ConstantFit fit;  // fit.node empty: none found or none looked for
};

// The comparison stage's result. Localization returns its own (LocalizeResult); Compare()
// (engine.h) assembles both into the complete report.
struct ComparisonResult {
  SideInfo side_a, side_b;
  std::string describe_a, describe_b;
  TolerancePolicy policy;
  std::vector<TensorResult> rows;  // topological order of side A
  std::vector<std::string> only_a, only_b;
  // side A's tensors that side B's optimized graph fuses away: not compared, never failures
  std::vector<std::string> hidden_b;
  // Two live models compared whole: a graph output of one side that no row pairs, one line
  // each ("side B's graph output 'extra' has no counterpart in A"). Each fails the comparison:
  // what a model returns is its contract.
  std::vector<std::string> unpaired_outputs;
  // Graph outputs whose every value is NaN on both sides (NaN in the inputs reached all of
  // them), one line each: none of their values was compared, so the comparison cannot pass.
  std::vector<std::string> nan_outputs;
  // Rows beyond tolerance that pass as inherited rounding (pipeline/inherited_verdict.h: no
  // node introduces their error and every graph output is within tolerance).
  size_t inherited_passed = 0;
  int first_failure = -1;     // index into rows
  std::vector<int> frontier;  // rows where error is introduced
  size_t failures = 0;
  bool frontier_from_graph = false;
  size_t runs_a = 0, runs_b = 0, batches = 0;
  bool bisected = false;  // RunBisection: the first failure was searched for before the rest
  size_t bisect_rounds = 0;
  int first_difference = -1;  // first row (topological order) that is not bitwise identical
  bool aborted = false;       // a side failed mid-way; rows hold what was compared
  Status abort_status;
  double seconds = 0;
};

ExactCloseness SummarizeCloseness(const ComparisonResult& r);

// Per op type: how many compared rows there are and how many are bit-exact (every element equal)
// (what two platforms' kernels agree on), by op type name.
struct OpExactness {
  std::string op_type;
  size_t compared = 0, bit_exact = 0;
};
std::vector<OpExactness> BitExactByOp(const ComparisonResult& r);

// The rows that introduce error, one per tensor of side B: where a module and the containers
// whose last child it is share a tensor, the first row (the smallest module, which PyTorch
// finishes first) stands for it; a container is never a culprit of its own.
std::vector<int> FrontierOf(const ComparisonResult& r);

using RowCallback = std::function<void(const TensorResult& row, size_t done, size_t total)>;

// Compares B against A. Pairs by exact name (plus `rename`); never by position or substring.
// Fails (kInvalidArgument) when the sides have no tensor in common; a side failing mid-way ends
// the comparison early with `aborted` set and the rows already compared kept.
Expected<ComparisonResult> RunComparison(Side& a, Side& b, const CompareJob& job,
                                         const RowCallback& on_row = nullptr);

// Finds the first failing tensor early: a k-ary search over side A's topological order with at
// most `per_run` tensors per side per run (fewer if the memory budget says so) and a walk up the
// graph to a node whose inputs pass; then compares every remaining tensor under the memory
// budget, so the rows, frontier and verdict equal RunComparison's. `bisect_rounds` counts the
// search's runs, `batches` all runs.
Expected<ComparisonResult> RunBisection(Side& a, Side& b, const CompareJob& job, size_t per_run);

// Reads a mapping of renamed tensors: a JSON object {"name in A": "name in B"} or a text file
// with two columns per line (A name, whitespace, B name; '#' starts a comment).
Expected<std::map<std::string, std::string>> ReadTensorMapping(const std::string& path);

}  // namespace onnxprobe
