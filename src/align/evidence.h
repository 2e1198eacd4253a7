// Evidence for structural plans: the ONNX candidates' dtypes and shapes (from a run of the ONNX
// side), and, where several candidates of the right type remain, their values.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "align/plan.h"
#include "align/torch_calls.h"
#include "onnxprobe/side/side.h"

namespace onnxprobe::align {

// Relative L2 distances at or below this are float noise between frameworks (PyTorch vs ONNX
// Runtime differ by ~1e-6 per op, growing with depth): tensors this close hold the same values.
constexpr double kSameValues = 1e-3;

// Relative L2 distance ||b - a|| / ||a|| (accumulated in double; 0 when both are all zero, 1
// when only a is); +inf when shapes or dtypes differ, or when integer or boolean tensors differ in
// any element (they carry no rounding: equal or another value).
double RelativeDistance(const Tensor& a, const Tensor& b);

// Whether `candidate` holds `reference`'s values in another order (a transpose or permutation of
// it; same dtype and element count, shapes may differ): far apart element by element (relative L2 >
// 0.1) while the sorted values agree to float noise. Sets both relative distances.
bool SameValuesOtherLayout(const Tensor& reference, const Tensor& candidate, double* in_order,
                           double* as_sets);

// Fetches `names` from `side` in runs of at most `budget` estimated bytes (0: one run; the rule
// of common/budget_planner.h), calling `fn` for each.
Status FetchInBatches(Side& side, const std::vector<std::string>& names, uint64_t budget,
                      const std::function<void(const RunOutput&)>& fn);

// Which candidate values pick: index into `distances` (one per candidate, in topological order),
// or -1 when values do not tell them apart. Candidates that agree with the reference to within
// float noise and with each other are the same values: the first is taken.
int ChooseByValue(const std::vector<double>& distances, std::string* why);

// Outputs of one call whose only candidate is the same tensor: values keep the output that holds
// it (and outputs with the same values); the others lose the candidate, with a note. When values
// do not tell them apart, none keeps it.
Status SettleSharedCandidates(Side& torch_side, Side& onnx_side, const TorchCalls& calls,
                              const std::unordered_map<std::string, const Tensor*>& inputs,
                              std::vector<Plan>* plans);

// Fills plan.chosen/confidence for every plan with candidates, or clears the plan with a note.
Status ApplyEvidence(Side& torch_side, Side& onnx_side, const TorchCalls& calls,
                     std::vector<Plan>* plans);

}  // namespace onnxprobe::align
