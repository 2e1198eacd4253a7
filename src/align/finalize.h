// The last steps of AlignTorchCapture: plans resolved into rows (aliases followed, BatchNorm
// folding applied), then an advisory value search for rows structure left unaligned.
#pragma once

#include <vector>

#include "align/call_graph.h"
#include "align/plan.h"
#include "align/torch_calls.h"
#include "onnxprobe/align/align.h"

namespace onnxprobe::align {

// Rows in capture order. `value_eligible` marks rows a value search may still pair (not those
// fused away by design or following an unaligned tensor).
Alignment Finalize(const TorchCalls& calls, const CallGraph& graph, const Model& model,
                   const std::vector<Plan>& plans, std::vector<bool>* value_eligible);

// Pairs eligible unaligned rows with the same-typed ONNX tensor near their expected position
// whose values match to float noise, when exactly one does; such rows go to `advisory`.
Status AdvisoryValueSearch(Side& torch_side, Side& onnx_side, const TorchCalls& calls,
                           const CallGraph& graph, const std::vector<bool>& value_eligible,
                           Alignment* alignment);

// Parameter parity (see ParityReport); fills alignment->parity and notes the affected rows.
// Does nothing when the capture holds no parameters.
Status CheckParameterParity(Side& torch_side, Side& onnx_side, const TorchCalls& calls,
                            const CallGraph& graph, Alignment* alignment);

// Pairs the capture's call inputs (TorchCallInput: values functional code made) with the ONNX
// tensors the calls' nodes read from outside and PyTorch holds no value for, by dtype and shape
// when exactly one fits; appends a row per call input (kCallInput, or unaligned saying why).
// Runs `onnx_side` once for the candidates' types.
Status PairCallInputs(Side& torch_side, Side& onnx_side, const TorchCalls& calls,
                      const CallGraph& graph, const Model& model, Alignment* alignment);

// The module calls whose nodes are known, with what holds their inputs' values on the PyTorch side.
std::vector<ModuleSpan> ModuleSpans(const TorchCalls& calls, const CallGraph& graph,
                                    const Model& model, const Alignment& alignment);

}  // namespace onnxprobe::align
