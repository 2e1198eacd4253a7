#include "align/evidence.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <unordered_map>

#include "onnxprobe/common/budget_planner.h"

namespace onnxprobe::align {
namespace {

struct Meta {
  DType dtype = DType::kFloat32;
  Shape shape;
};

std::string TypeString(DType d, const Shape& s) {
  return std::string(DTypeName(d)) + ShapeToString(s);
}

}  // namespace

double RelativeDistance(const Tensor& a, const Tensor& b) {
  if (a.empty() || b.empty() || a.dtype() != b.dtype() || a.shape() != b.shape())
    return std::numeric_limits<double>::infinity();
  double num = 0, den = 0;
  const uint64_t n = a.num_elements();
  if (a.dtype() == DType::kFloat32) {
    const float* x = a.data_as<float>();
    const float* y = b.data_as<float>();
    for (uint64_t i = 0; i < n; ++i) {
      double d = static_cast<double>(y[i]) - x[i];
      num += d * d;
      den += static_cast<double>(x[i]) * x[i];
    }
  } else if (!IsFloating(a.dtype())) {
    // integers and booleans carry no rounding: two copies of one value are equal element by
    // element, and any difference (an index off by 15 in 1500) is another value, at any size
    for (uint64_t i = 0; i < n; ++i) {
      if (ElementAsDouble(a, i) != ElementAsDouble(b, i))
        return std::numeric_limits<double>::infinity();
    }
    return 0;
  } else {
    for (uint64_t i = 0; i < n; ++i) {
      double x = ElementAsDouble(a, i), y = ElementAsDouble(b, i);
      num += (y - x) * (y - x);
      den += x * x;
    }
  }
  if (!std::isfinite(num) || !std::isfinite(den)) return std::numeric_limits<double>::infinity();
  if (den == 0) return num == 0 ? 0 : 1;
  return std::sqrt(num / den);
}

Status FetchInBatches(Side& side, const std::vector<std::string>& names, uint64_t budget,
                      const std::function<void(const RunOutput&)>& fn) {
  std::map<std::string, uint64_t> sizes;
  for (const auto& t : side.tensors()) sizes[t.name] = t.est_bytes;
  for (const auto& batch : PlanNameBatches(names, sizes, budget)) {
    OP_ASSIGN_OR_RETURN(auto outs, side.Fetch(batch));
    for (const auto& o : outs) fn(o);
  }
  return Status::Ok();
}

int ChooseByValue(const std::vector<double>& d, std::string* why) {
  std::vector<int> order(d.size());
  for (size_t i = 0; i < d.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return d[a] < d[b]; });
  if (order.empty() || !std::isfinite(d[order[0]])) {
    *why = "no candidate holds comparable values";
    return -1;
  }
  if (order.size() == 1) return order[0];
  double best = d[order[0]], second = d[order[1]];
  // copies of one value sit at the same distance from the reference, up to rounding; the steps
  // of a converging iteration sit within kSameValues of it too, but clearly apart
  auto copy = [&](double x) { return x <= kSameValues && x <= 4 * best + 1e-6; };
  if (copy(best) && copy(second)) {
    // several tensors holding the reference's values (copies): the first made is the one
    int first = order[0];
    for (int k : order) {
      if (copy(d[k])) first = std::min(first, k);
    }
    *why = "candidates hold the same values; the first is taken";
    return first;
  }
  if (best < 0.5 * second) return order[0];
  *why = std::to_string(d.size()) + " structural candidates that values do not tell apart";
  return -1;
}

Status ApplyEvidence(Side& torch_side, Side& onnx_side, const TorchCalls& calls,
                     std::vector<Plan>* plans) {
  // 1. dtype and shape of every candidate: graph inputs from the capture, the rest from a run
  std::unordered_map<std::string, Meta> meta;
  OP_ASSIGN_OR_RETURN(auto recorded, torch_side.RecordedInputs());
  std::unordered_map<std::string, const Tensor*> inputs;
  for (const auto& in : recorded) {
    meta[in.name] = {in.tensor.dtype(), in.tensor.shape()};
    inputs[in.name] = &in.tensor;
  }
  std::set<std::string> capturable;
  for (const auto& t : onnx_side.tensors()) capturable.insert(t.name);
  std::vector<std::string> wanted;
  std::set<std::string> seen;
  for (const auto& p : *plans) {
    for (const auto& c : p.candidates) {
      if (!meta.count(c) && capturable.count(c) && seen.insert(c).second) wanted.push_back(c);
    }
    for (const auto& c : p.unread) {
      if (!meta.count(c) && capturable.count(c) && seen.insert(c).second) wanted.push_back(c);
    }
  }
  OP_RETURN_IF_ERROR(FetchInBatches(onnx_side, wanted, calls.fetch_budget, [&](const RunOutput& o) {
    if (!o.tensor.empty()) meta[o.name] = {o.tensor.dtype(), o.tensor.shape()};
  }));

  // 2. keep the candidates of the captured tensor's dtype and shape
  const auto& ts = calls.tensors;
  for (size_t i = 0; i < plans->size(); ++i) {
    Plan& p = (*plans)[i];
    if (p.candidates.empty()) continue;
    std::vector<std::string> fit;
    for (const auto& c : p.candidates) {
      auto it = meta.find(c);
      if (it == meta.end()) continue;
      if (!ts[i].known_type || (it->second.dtype == ts[i].dtype && it->second.shape == ts[i].shape))
        fit.push_back(c);
    }
    if (fit.empty() && ts[i].known_type) {  // the call's own outputs that nothing reads
      for (const auto& c : p.unread) {
        auto it = meta.find(c);
        if (it != meta.end() && it->second.dtype == ts[i].dtype && it->second.shape == ts[i].shape)
          fit.push_back(c);
      }
      if (!fit.empty())
        p.note =
            "an output of its own nodes that nothing in the graph reads (the module's "
            "caller does not use it)";
    }
    if (fit.empty()) {
      p.note = "no structural candidate is " + TypeString(ts[i].dtype, ts[i].shape) + " (" +
               std::to_string(p.candidates.size()) + " made in its scope)";
      p.method = AlignMethod::kNone;
    }
    p.candidates = std::move(fit);
  }
  // 3. outputs of one call: a candidate that only one of them can take is taken
  std::unordered_map<int, std::vector<int>> by_call;
  for (size_t i = 0; i < plans->size(); ++i) {
    if ((*plans)[i].candidates.size() >= 1) by_call[ts[i].call].push_back(static_cast<int>(i));
  }
  for (auto& [call, members] : by_call) {
    if (members.size() < 2) continue;
    for (bool changed = true; changed;) {
      changed = false;
      for (int a : members) {
        Plan& pa = (*plans)[a];
        if (pa.candidates.size() != 1) continue;
        for (int b : members) {
          Plan& pb = (*plans)[b];
          if (b == a || pb.candidates.size() < 2) continue;
          auto it = std::find(pb.candidates.begin(), pb.candidates.end(), pa.candidates[0]);
          if (it == pb.candidates.end()) continue;
          pb.candidates.erase(it);
          changed = true;
        }
      }
    }
  }
  OP_RETURN_IF_ERROR(SettleSharedCandidates(torch_side, onnx_side, calls, inputs, plans));
  for (auto& p : *plans) {
    if (p.candidates.size() == 1) {
      p.chosen = p.candidates[0];
      p.confidence = 1;
    }
  }
  // 4. several candidates of the right type: values choose
  std::vector<int> open;
  std::vector<std::string> torch_names, onnx_names;
  seen.clear();
  for (size_t i = 0; i < plans->size(); ++i) {
    const Plan& p = (*plans)[i];
    if (p.candidates.size() < 2) continue;
    open.push_back(static_cast<int>(i));
    torch_names.push_back(ts[i].name);
    for (const auto& c : p.candidates) {
      if (!inputs.count(c) && seen.insert(c).second) onnx_names.push_back(c);
    }
  }
  if (open.empty()) return Status::Ok();
  std::unordered_map<std::string, std::vector<double>> distance;  // torch name -> per candidate
  std::unordered_map<std::string, int> plan_of;
  for (int i : open) plan_of[ts[i].name] = i;
  for (int i : open) distance[ts[i].name].assign((*plans)[i].candidates.size(), HUGE_VAL);
  // one batch of torch tensors at a time against every ONNX candidate
  size_t at = 0;
  while (at < open.size()) {
    std::vector<std::string> tb;
    std::set<std::string> need;
    uint64_t bytes = 0;
    // half the budget for PyTorch's tensors, half for the ONNX candidates fetched against them
    for (; at < open.size() &&
           (tb.empty() || calls.fetch_budget == 0 || bytes < calls.fetch_budget / 2);
         ++at) {
      const auto& t = ts[open[at]];
      tb.push_back(t.name);
      for (const auto& c : (*plans)[open[at]].candidates) need.insert(c);
      if (t.known_type) {
        auto nb = NumBytes(t.dtype, t.shape);
        bytes += nb.ok() ? *nb : 0;
      }
    }
    OP_ASSIGN_OR_RETURN(auto tv, torch_side.Fetch(tb));
    std::unordered_map<std::string, const Tensor*> tval;
    for (const auto& o : tv) tval[o.name] = &o.tensor;
    auto score = [&](const std::string& cname, const Tensor& cval) {
      for (const auto& tn : tb) {
        const Plan& p = (*plans)[plan_of[tn]];
        for (size_t k = 0; k < p.candidates.size(); ++k) {
          if (p.candidates[k] == cname) distance[tn][k] = RelativeDistance(*tval[tn], cval);
        }
      }
    };
    std::vector<std::string> fetch;
    for (const auto& c : need) {
      if (inputs.count(c))
        score(c, *inputs[c]);
      else
        fetch.push_back(c);
    }
    OP_RETURN_IF_ERROR(
        FetchInBatches(onnx_side, fetch, calls.fetch_budget, [&](const RunOutput& o) {
          if (!o.tensor.empty()) score(o.name, o.tensor);
        }));
  }
  for (int i : open) {
    Plan& p = (*plans)[i];
    const auto& d = distance[ts[i].name];
    std::string why;
    int k = ChooseByValue(d, &why);
    if (k < 0) {
      p.note = why;
      p.method = AlignMethod::kNone;
      continue;
    }
    p.chosen = p.candidates[k];
    p.confidence = std::max(0.0, 1.0 - d[k]);
    p.note += std::string(p.note.empty() ? "" : "; ") + "values chose among " +
              std::to_string(p.candidates.size()) + " structural candidates" +
              (why.empty() ? "" : " (" + why + ")");
  }
  return Status::Ok();
}

}  // namespace onnxprobe::align
