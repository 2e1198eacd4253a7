// Values inside modules: the outputs of the torch functions a module call ran itself (recorded by
// the companion, TorchFunctional), paired with the ONNX tensors made by the call's own nodes.
// Structure decides: a compatible op type (the last node of the function's export), the same
// dtype and shape, and call order, which the exporter keeps as node order. Values only choose
// among the candidates structure leaves. Node names are never read.
#pragma once

#include <string>
#include <vector>

#include "align/call_graph.h"
#include "align/torch_calls.h"
#include "onnxprobe/align/align.h"
#include "onnxprobe/model/model.h"
#include "onnxprobe/side/side.h"

namespace onnxprobe::align {

// ONNX op types whose output may hold a torch function's value (the last node of its export,
// e.g. linear -> Gemm, or MatMul then Add); empty for a function not known here.
const std::vector<std::string>& OpsForFunction(const std::string& function);

// Order-preserving candidates. `fits[i]` lists, ascending, the positions (in topological order)
// of the tensors record i (in call order) may be. When every record with a fit can be placed in
// increasing order, record i's window is its fits between the earliest and the latest position a
// complete placement allows; otherwise (some record has no counterpart in order) its fits.
std::vector<std::vector<int>> OrderedWindows(const std::vector<std::vector<int>>& fits);

// Appends one row per functional record: kFunctional when one candidate remains (or values pick
// one clearly), otherwise unaligned saying why. A record whose counterpart another row already
// pairs gets no row: that row compares the same value. Runs `onnx_side` for the candidates' types
// (and values where several remain).
Status PairFunctional(Side& torch_side, Side& onnx_side, const TorchCalls& calls,
                      const CallGraph& graph, const Model& model, Alignment* alignment);

}  // namespace onnxprobe::align
