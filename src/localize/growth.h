// Internal: how much a tensor's error grows over the error of the tensors its node reads, from
// the comparison's rows alone (no runs). Ranks isolation candidates so their number stays
// bounded, and finds where a difference is born when a node's inputs are bit-exact.
#pragma once

#include <string>
#include <unordered_map>
#include <vector>

#include "onnxprobe/engine/comparison.h"
#include "onnxprobe/model/model.h"

namespace onnxprobe {

struct RowGrowth {
  int row = -1;
  // SNR of the worst compared input minus the row's own SNR, in dB (+inf when every input is
  // bit-exact and the row is not; -inf when the row itself is bit-exact)
  double growth_db = 0;
  bool inputs_known = true;      // every activation input traced to a compared row or a graph input
  bool inputs_identical = true;  // ... and each of those is bit-exact
  bool via_b_only = false;       // the trace crossed nodes side A has no tensors for
};

// One entry per compared row, in row order. `graph` is side B's (rows are found by name_b).
std::vector<RowGrowth> ErrorGrowth(const Model& graph, const ComparisonResult& r);

}  // namespace onnxprobe
