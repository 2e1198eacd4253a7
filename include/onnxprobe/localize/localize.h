// Localization: tell the node that introduces an error from the nodes that inherit it, by
// running each candidate alone on side B's runtime with side A's exact inputs, and write a
// minimal repro bundle any ONNX test runner can replay.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "onnxprobe/engine/comparison.h"

namespace onnxprobe {

enum class Candidates { kFrontier, kFailing, kAll };

struct LocalizeOptions {
  Candidates candidates = Candidates::kFrontier;
  size_t max_subgraph_nodes = 32;  // nodes only in B pulled in around a candidate
  std::string repro_dir;           // write a bundle for the top culprit here ("" = none)
  // Every failing row is isolated (kFrontier lists those that introduce error, kFailing every
  // failing row, kAll every row), side A's tensors fetched in groups within the memory budget.
  // Drift origins: the nodes that introduce a difference of any size, also when every tensor
  // passes. Rows whose inputs are bit-exact need no run; others are isolated (compared
  // bitwise), the largest error growth first, at most max_drift_candidates.
  bool drift = true;
  size_t max_drift_candidates = 256;
  // Called after each isolated run with the number of runs so far (progress; may be empty).
  std::function<void(size_t runs)> on_run;
  // Keep the isolated run of the first this many introduced culprits (LocalizeResult::cases),
  // for diagnosis; 0 keeps none (their inputs are copies of side A's tensors).
  size_t keep_cases = 0;
};

// One introduced culprit's isolated run, kept for diagnosis: the model run alone (side B's
// nodes), side A's tensors it was fed, side A's value of its output and side B's isolated one.
struct IsolatedCase {
  std::string node, tensor;  // the culprit's node and tensor (side A's name)
  std::string model_bytes;   // serialized ModelProto of the isolated nodes
  std::string model_dir;     // where its external data resolves (side B's model folder)
  std::vector<NamedTensor> inputs;
  std::string output;  // the output's name in the isolated model (side B's)
  Tensor expected;     // side A's value
  Tensor observed;     // side B's runtime on the isolated model
};

struct LocalizeResult {
  bool ran = false;
  std::string note;               // why nothing (or no bundle) came out, when that happens
  std::vector<Culprit> culprits;  // introduced first, by isolated error; failed isolations last
  std::string repro_dir;          // the bundle written, "" when none
  Status repro_status;            // why a bundle that was asked for could not be written
  size_t isolation_runs = 0;
  // Runs of side A for tensors the comparison did not already hold (A's values at the isolated
  // nodes' inputs that side B fuses away and that were not captured with the comparison's)
  size_t side_a_runs = 0;
  double seconds = 0;
  // Nodes that introduce a difference of any size (culprit records; `introduced` means "makes
  // a difference"), in topological order, and how many differing rows were left unexamined.
  std::vector<Culprit> drift_origins;
  size_t drift_unexamined = 0;
  // Rows whose role isolation settled (a failing row that is within tolerance alone is
  // inherited; one that fails alone is introduced). ApplyRoles() writes them into the rows.
  std::vector<std::pair<int, Role>> settled;
  // Advisory rows (values inside a module call its outputs did not confirm) that substitution
  // confirms, with the reason: ApplyRoles() judges them as failing rows.
  std::vector<std::pair<int, std::string>> confirmed;
  // Failing advisory rows the substitution did not confirm, with what it showed (added to the
  // row's reason by ApplyRoles: an advisory row that fails is explained, never silent).
  std::vector<std::pair<int, std::string>> explained;
  std::vector<IsolatedCase> cases;  // LocalizeOptions::keep_cases
};

// Isolates candidates of the comparison `r` (side B must be live; side A live or a dump).
// Fails only on bad arguments; isolation problems are recorded per culprit and in `note`.
Expected<LocalizeResult> Localize(Side& a, Side& b, const std::vector<NamedTensor>& inputs,
                                  const CompareJob& job, const LocalizeOptions& options,
                                  const ComparisonResult& r);

// The comparison's rows with localization's settled roles; recomputes the frontier.
void ApplyRoles(const LocalizeResult& l, ComparisonResult* r);

// The settings a repro bundle records (onnxprobe.json) and replay reads back: side B's session
// options, its ONNX Runtime version (and the library, when that version is installed here),
// and the tolerance policy (global tolerance = the culprit's, judging mode, relative eps).
// A bundle without onnxprobe.json gives the defaults; a malformed one fails.
struct ReproSettings {
  SessionOptions session;
  std::string ort_version;  // "" when unknown
  std::string ort_library;  // "" = default runtime
  TolerancePolicy policy;
};
Expected<ReproSettings> ReadReproSettings(const std::string& dir);

// Replays a repro bundle (model.onnx + test_data_set_0/) on a runtime and compares the outputs
// with the bundle's expected outputs. Returns one row per output.
struct ReplayResult {
  std::vector<TensorResult> rows;
  std::string runtime;
  size_t failures = 0;
};
Expected<ReplayResult> ReplayBundle(const std::string& dir, const std::string& ort_library,
                                    const SessionOptions& options, const TolerancePolicy& policy);

}  // namespace onnxprobe
