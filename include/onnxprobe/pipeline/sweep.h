// A comparison repeated over values of symbolic input dimensions (e.g. batch = 1, 2, 8): one
// complete CompareReport per shape, and a summary per shape.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "onnxprobe/pipeline/engine.h"

namespace onnxprobe {

struct SweepAxis {
  std::string dim;  // a symbolic dimension name of the model's inputs
  std::vector<int64_t> values;
};

struct SweepRequest {
  CompareRequest compare;       // the comparison run at each point (its fixed dims stay as given)
  std::vector<SweepAxis> axes;  // every combination of values; the first axis varies slowest
};

struct SweepPoint {
  std::vector<std::pair<std::string, int64_t>> dims;  // in axis order
  // The runtime failed at this shape before anything was compared (e.g. a Reshape that only
  // works at one batch size): kBackend, and `report` is empty.
  Status error;
  CompareReport report;
  int worst_row = -1;  // the compared row with the largest error / allowed error; -1 when none
  bool passed() const { return error.ok() && report.passed(); }
};

struct SweepReport {
  std::vector<SweepAxis> axes;
  std::vector<SweepPoint> points;
  size_t failed_points = 0;  // points that did not pass (failed comparison or runtime error)
  bool passed() const { return failed_points == 0; }
};

// Runs Compare() at every combination of the axes' values (at most 256). Fails with
// kInvalidArgument on an empty axis, a value below 1, a dimension swept twice or also fixed in
// compare.inputs.dim_params, inputs given as files or tensors (their shapes are fixed), a repro
// bundle (each point would replace it), and like Compare() on
// bad input at the first point (e.g. a dimension no input has). Runtime failures at a point are
// recorded in that point.
Expected<SweepReport> CompareSweep(const SweepRequest& request);

// "batch=1, seq=8"
std::string SweepPointLabel(const SweepPoint& p);

}  // namespace onnxprobe
