// Structural alignment plans: for each captured tensor, either the earlier tensor (or model
// input) it is the very same object as, or the ONNX tensors that structure allows, to be narrowed
// by dtype and shape and, where several remain, chosen by values (evidence.cc).
#pragma once

#include <string>
#include <vector>

#include "align/call_graph.h"
#include "align/torch_calls.h"
#include "onnxprobe/align/align.h"

namespace onnxprobe::align {

struct Plan {
  AlignMethod method = AlignMethod::kNone;
  std::vector<std::string> candidates;  // structural candidates, topological order
  int alias = -1;                       // index of the tensor whose counterpart this one shares
  std::string alias_input;              // or: this graph input
  // A folded BatchNorm: index of the tensor it normalized. That tensor's counterpart holds the
  // normalized values, so it and its aliases lose it.
  int fold_of = -1;
  // outputs of the call's own nodes nothing reads: candidates only when no structural one has
  // the captured type (the exporter keeps a node's unread output, e.g. a GRU's final state)
  std::vector<std::string> unread;
  std::string chosen;  // set by the evidence stage
  double confidence = 0;
  std::string note;
};

// One plan per entry of calls.tensors.
std::vector<Plan> PlanAlignment(const TorchCalls& calls, const CallGraph& graph,
                                const Model& model);

}  // namespace onnxprobe::align
