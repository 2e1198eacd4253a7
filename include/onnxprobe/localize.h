// Localization: tell the node that introduces an error from the nodes that inherit it, by
// running each candidate alone on side B's runtime with side A's exact inputs, and write a
// minimal repro bundle any ONNX test runner can replay.
#pragma once

#include <string>
#include <vector>

#include "onnxprobe/comparison.h"

namespace onnxprobe {

enum class Candidates { kFrontier, kFailing, kAll };

struct LocalizeOptions {
  Candidates candidates = Candidates::kFrontier;
  size_t max_subgraph_nodes = 32;  // nodes only in B pulled in around a candidate
  std::string repro_dir;           // write a bundle for the top culprit here ("" = none)
};

// Isolates candidates of `r` (side B must be live; side A live or a dump) and fills
// r->culprits, r->repro_dir; rows whose isolated error is within tolerance become inherited.
// Fails only on bad arguments; isolation problems are recorded per culprit.
Status Localize(Side& a, Side& b, const std::vector<NamedTensor>& inputs, const CompareJob& job,
                const LocalizeOptions& options, ComparisonResult* r);

// The settings a repro bundle records (onnxprobe.json): side B's session options, the ONNX
// Runtime library it ran on when that version is installed here ("" otherwise), and the
// tolerances. A bundle without onnxprobe.json gives the defaults; a malformed one fails.
struct ReproSettings {
  SessionOptions session;
  std::string ort_library;
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
