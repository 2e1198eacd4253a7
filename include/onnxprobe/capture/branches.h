// Control flow made capturable: a model's If nodes replaced by the branch each takes for given
// inputs and its Loop and Scan nodes unrolled into one copy of the body per iteration, so every
// tensor they compute is a main-graph tensor that a run captures and a comparison compares and
// isolates like any other.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "onnxprobe/backend/backend.h"
#include "onnxprobe/model/model.h"
#include "onnxprobe/tensor/tensor_proto.h"

namespace onnxprobe {

struct TakenBranches {
  Model model;                        // the model with the taken branches inlined (or as it is)
  std::map<std::string, bool> taken;  // each inlined If's first output -> its condition
  std::map<std::string, int64_t> iterations;  // each unrolled Loop/Scan's first output -> count
  std::vector<std::string> inlined;   // the inlined Ifs' names, in the order they were taken
  std::vector<std::string> unrolled;  // the unrolled Loops' and Scans' names
  std::vector<std::string> notes;     // one line per If or loop: what runs, or why it stays
};

// The If nodes of `model` whose condition is a graph input or a computed scalar, replaced by the
// branch they take on `inputs`, and its Loop and Scan nodes whose iteration count a tensor tells
// (CountableLoops) unrolled (one run of the model with the conditions and counts marked as
// outputs per nesting level; InlineIfBranches and UnrollLoops, graph.h), up to 8 levels of
// nesting, at most 1024 iterations and 20000 unrolled nodes per loop. Above optimization level
// disabled the optimizer could fuse across an If boundary that no longer exists, so the inlined
// model must compute the model's graph outputs bit for bit on `inputs` (two more runs), or the
// model is returned as it is and a note says why. A model without If nodes costs one pass over
// its nodes. Fails when the runtime fails on the model.
Expected<TakenBranches> TakeBranches(const Model& model, Backend& backend,
                                     const SessionOptions& options,
                                     const std::vector<NamedTensor>& inputs);

}  // namespace onnxprobe
