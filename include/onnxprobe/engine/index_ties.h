// Index outputs that differ only where the values they index tie.
#pragma once

#include "onnxprobe/engine/comparison.h"
#include "onnxprobe/model/model.h"
#include "onnxprobe/side/side.h"

namespace onnxprobe {

// Whether `tensor` is an index output (TopK's second output, ArgMax's or ArgMin's output) of
// `node`, whose data input is node.inputs[0].
bool IsIndexOutput(const NodeInfo& node, const std::string& tensor);

// Whether `observed` differs from `expected` (index tensors of `node`) only at positions where
// both pick values of `x` (the node's data input) that agree within `tol`; `differing` counts
// the positions that differ and `ratio` (optional) the largest share of the tolerance the tied
// values' difference uses. False when nothing differs.
bool OnlyIndexTies(const Model& graph, const NodeInfo& node, const Tensor& expected,
                   const Tensor& observed, const Tensor& x, const Tolerance& tol,
                   uint64_t* differing, double* ratio = nullptr);

// A failing row of TopK's indices, ArgMax or ArgMin: when every differing position picks, on
// both sides, values of the node's data input (side B's) that agree within the row's tolerance,
// the sides only broke a tie differently (ReLU zeros, repeated values, float noise between
// near-equal values): the row passes, with a reason; its tolerance_ratio becomes that of the
// tied values (|x[i_a] - x[i_b]| over what the tolerance allows them, the largest). Fetches those
// rows' tensors again; a row whose values cannot be fetched is left as it is.
void SettleIndexTies(Side& a, Side& b, const Model& graph, ComparisonResult* r);

}  // namespace onnxprobe
