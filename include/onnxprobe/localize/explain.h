// Which optimization did it: when two sides differ only in ONNX Runtime's graph optimization
// level, the ladder (disabled -> basic -> extended -> all) says at which level each graph output
// starts to differ, and a search over the runtime's graph transformers (disabled through the
// session configuration) names the ones whose rewrite changes the numbers.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "onnxprobe/backend/backend.h"
#include "onnxprobe/capture/capture.h"
#include "onnxprobe/compare/compare.h"

namespace onnxprobe {

struct ExplainRequest {
  std::string model;
  std::string ort_library;  // "" = default
  SessionOptions session;   // side B's settings; its optimization level is the one explained
  InputOptions inputs;
  TolerancePolicy policy;
};

struct LadderStep {
  OptLevel level = OptLevel::kBasic;
  double max_abs = 0;  // largest difference over the graph outputs vs optimizations disabled
  size_t differing_outputs = 0;
  bool within_tolerance = true;
};

struct ExplainResult {
  std::vector<LadderStep> ladder;  // every level above disabled, up to side B's
  std::optional<OptLevel> first_level_with_difference;  // none: every step is bit-exact
  // Transformers and rewrite rules whose rewrite changes the outputs at side B's level (their
  // ONNX Runtime names), in the order the search found them.
  std::vector<std::string> responsible;
  // Disabling every known transformer leaves side B bit-exact with optimizations disabled: the
  // difference is the transformers' (otherwise some comes from elsewhere, e.g. kernels chosen
  // for the optimized graph).
  bool explained_by_transformers = false;
  size_t runs = 0;
};

// Fails on bad input and runtime errors (kBackend).
Expected<ExplainResult> ExplainOptimizations(const ExplainRequest& request);

// The transformers whose rewrite, at `options`' optimization level, moves the outputs of the
// model `model_bytes` run on `feed` away from what it gives with every known transformer
// disabled (group testing: a group that changes them only together is named whole). `runs`
// (may be null) counts the sessions run. Fails on runtime errors.
Expected<std::vector<std::string>> FindChangingTransformers(
    Backend& backend, const std::string& model_bytes, const std::string& model_dir,
    const std::vector<std::pair<std::string, const Tensor*>>& feed,
    const std::vector<std::string>& outputs, const SessionOptions& options, size_t* runs);

// The names of ONNX Runtime's graph transformers and rewrite rules the search toggles.
const std::vector<std::string>& KnownOrtTransformers();

}  // namespace onnxprobe
