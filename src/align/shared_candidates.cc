// Outputs of one module call left with the same single structural candidate: a tuple output the
// exporter dropped (an LSTM's cell state that nothing reads; a residual sum the caller discards)
// leaves its sibling's tensor (its own, or a submodule's it returns) as the only one in the
// scope. Values decide which output the tensor is; the others stay
// unaligned.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

#include "align/evidence.h"
#include "onnxprobe/common/format.h"

namespace onnxprobe::align {

Status SettleSharedCandidates(Side& torch_side, Side& onnx_side, const TorchCalls& calls,
                              const std::unordered_map<std::string, const Tensor*>& inputs,
                              std::vector<Plan>* plans) {
  const auto& ts = calls.tensors;
  // (call, candidate) -> the call's outputs whose only candidate it is
  // an output that is the same tensor object as an earlier one (a submodule's output) has that
  // one's single candidate
  std::vector<std::string> single(plans->size());
  std::map<std::pair<int, std::string>, std::vector<int>> groups;
  for (size_t i = 0; i < plans->size(); ++i) {
    const Plan& p = (*plans)[i];
    if (p.candidates.size() == 1)
      single[i] = p.candidates[0];
    else if (p.alias >= 0 && p.fold_of < 0 && p.alias < static_cast<int>(i))
      single[i] = single[p.alias];
    if (!single[i].empty()) groups[{ts[i].call, single[i]}].push_back(static_cast<int>(i));
  }
  std::vector<std::string> torch_names, onnx_names;
  std::set<std::string> seen;
  for (const auto& [key, members] : groups) {
    if (members.size() < 2) continue;
    for (int m : members) torch_names.push_back(ts[m].name);
    if (!inputs.count(key.second) && seen.insert(key.second).second)
      onnx_names.push_back(key.second);
  }
  if (torch_names.empty()) return Status::Ok();
  // values a side cannot give leave the plans as structure made them
  auto tv = torch_side.Fetch(torch_names);
  if (!tv.ok()) return Status::Ok();
  std::map<std::string, Tensor> value;
  for (auto& o : *tv) value[o.name] = std::move(o.tensor);
  std::map<std::string, Tensor> onnx_value;
  if (!onnx_names.empty()) {
    auto ov = onnx_side.Fetch(onnx_names);
    if (!ov.ok()) return Status::Ok();
    for (auto& o : *ov) onnx_value[o.name] = std::move(o.tensor);
  }
  for (const auto& [key, members] : groups) {
    if (members.size() < 2) continue;
    const std::string& cand = key.second;
    const Tensor* c = inputs.count(cand) ? inputs.at(cand)
                                         : (onnx_value.count(cand) ? &onnx_value[cand] : nullptr);
    std::map<int, double> d;
    for (int m : members) {
      auto it = value.find(ts[m].name);
      d[m] = c == nullptr || it == value.end() ? HUGE_VAL : RelativeDistance(it->second, *c);
    }
    std::vector<int> order = members;
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return d[a] < d[b]; });
    const int best = order[0];
    // outputs holding the best one's values are the same values under another name
    std::vector<int> kept = {best}, lost;
    for (size_t k = 1; k < order.size(); ++k) {
      int m = order[k];
      bool same = value.count(ts[m].name) && value.count(ts[best].name) &&
                  RelativeDistance(value[ts[best].name], value[ts[m].name]) <= kSameValues;
      (same ? kept : lost).push_back(m);
    }
    if (lost.empty()) continue;
    const double second = d[lost[0]];
    const bool clear = std::isfinite(d[best]) && d[best] < 0.5 * second;
    for (int m : clear ? lost : order) {
      Plan& p = (*plans)[m];
      p.candidates.clear();
      p.alias = -1;
      p.method = AlignMethod::kNone;
      p.note = clear ? "its only structural candidate " + cand + " is " + ts[best].name +
                           " (relative distance " + FormatNumber(d[best], 2) + ", this output " +
                           FormatNumber(d[m], 2) + "): the exporter kept no tensor for it"
                     : std::to_string(members.size()) + " outputs of the call have only " + cand +
                           " as structural candidate, and values do not tell them apart";
    }
  }
  return Status::Ok();
}

}  // namespace onnxprobe::align
