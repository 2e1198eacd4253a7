// Internal: inside a set of nodes run together (a plan spanning a PyTorch module call), the node
// an error at the set's output comes from, found from the graph alone (no runs).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "onnxprobe/model/model.h"

namespace onnxprobe {

// A node passes an error on without making one when it has no attribute that changes values and
// all but one of its value inputs are fixed: Add/Sub/Mul/Div with a weight, a constant or a tensor
// fed from outside the set as the other operand; Reshape and the like (data input only). From
// `output`'s producer, steps back through such nodes, and through element-wise functions of one
// input without attributes (Erf, Sqrt, Sigmoid ...: right input, right output), to the single
// input they pass on, and
// returns the first node that is no such step (the source; where two computed operands meet, that
// node), or -1 when that is `output`'s own producer. When no computed input reaches `output`'s
// producer, the earliest Transpose, Slice or Concat on the way (a wrong perm, input order or
// window moves fixed values), or -1 when there is none. When such a function reads a value made
// from fixed values only (GELU's Erf of `x / sqrt(2)`), the arithmetic node making it (its
// constant is wrong), else the function. Fixed:
// initializers, graph inputs, `fed` (tensors the set is fed), outputs of Constant/Shape/Size, and
// outputs of pass-through nodes that read fixed tensors only.
int PassThroughSource(const GraphIndex& idx, const std::vector<int>& nodes,
                      const std::set<std::string>& fed, const std::string& output);

}  // namespace onnxprobe
