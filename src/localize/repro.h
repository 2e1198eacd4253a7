// Internal: writing a repro bundle in the ONNX backend-test layout.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "onnxprobe/common/json.h"
#include "onnxprobe/engine/comparison.h"
#include "onnxprobe/localize/localize.h"

namespace onnxprobe {

struct ReproBundle {
  std::string model_bytes;  // weights may be references into model_dir's files (RunAlone)
  std::string model_dir;
  std::vector<std::pair<std::string, const Tensor*>> inputs;    // in model input order
  std::vector<std::pair<std::string, const Tensor*>> expected;  // side A's outputs
  std::vector<std::pair<std::string, const Tensor*>> observed;  // side B's isolated outputs
};

// Writes `dir` (complete or absent): model.onnx (standalone: referenced weights read in),
// test_data_set_0/input_K.pb and output_K.pb
// (side A's outputs, the expected values), observed/output_K.pb (side B's), onnxprobe.json
// (side B's runtime settings and tolerances, read by `onnxprobe replay`), README.txt.
Status WriteReproBundle(const std::string& dir, const ReproBundle& bundle, const Culprit& culprit,
                        const Side& b, const ComparisonResult& r);

// The settings' fields of onnxprobe.json, the same ones ReadReproSettings reads.
void WriteReproSettings(const ReproSettings& s, JsonWriter* j);

}  // namespace onnxprobe
