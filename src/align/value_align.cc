// Pairs by values alone, for what structure left unaligned: the same-typed ONNX tensor near the
// expected position whose values match. Such pairs are advisory: shown, never judged.
#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_map>

#include "align/evidence.h"
#include "align/finalize.h"

namespace onnxprobe {
namespace align {
namespace {

constexpr int kWindow = 32;  // ONNX tensors either side of the expected position
constexpr size_t kMaxPerRow = 16;
constexpr size_t kMaxCandidates = 512;  // one run's worth
constexpr double kMaxDistance = 1e-2;   // relative L2: values that agree beyond doubt
}  // namespace

Status AdvisoryValueSearch(Side& torch_side, Side& onnx_side, const TorchCalls& calls,
                           const CallGraph& graph, const std::vector<bool>& eligible,
                           Alignment* al) {
  const auto& ot = onnx_side.tensors();
  const auto& ts = calls.tensors;
  std::unordered_map<std::string, int> pos;
  for (size_t k = 0; k < ot.size(); ++k) pos[ot[k].name] = static_cast<int>(k);
  std::set<std::string> claimed;
  for (const auto& r : al->rows) {
    if (!r.onnx_tensor.empty()) claimed.insert(r.onnx_tensor);
  }
  std::vector<std::pair<int, std::vector<std::string>>> todo;
  std::set<std::string> fetch;
  int expected = 0;
  for (size_t i = 0; i < al->rows.size(); ++i) {
    const AlignmentRow& r = al->rows[i];
    if (auto it = pos.find(r.onnx_tensor); it != pos.end()) expected = it->second;
    if (!r.onnx_tensor.empty() || !eligible[i] || !ts[i].known_type) continue;
    auto bytes = NumBytes(ts[i].dtype, ts[i].shape);
    if (!bytes.ok() || *bytes == 0) continue;
    std::vector<std::string> cands;
    for (int k = std::max(0, expected - kWindow);
         k < std::min(static_cast<int>(ot.size()), expected + kWindow + 1); ++k) {
      const SideTensor& t = ot[k];
      if (claimed.count(t.name) || !graph.dynamic(t.name)) continue;
      if (t.est_bytes != 0 && t.est_bytes != *bytes) continue;
      cands.push_back(t.name);
      if (cands.size() == kMaxPerRow) break;
    }
    if (cands.empty()) continue;
    size_t added = 0;
    for (const auto& c : cands) added += fetch.count(c) ? 0 : 1;
    if (fetch.size() + added > kMaxCandidates) break;
    fetch.insert(cands.begin(), cands.end());
    todo.emplace_back(static_cast<int>(i), std::move(cands));
  }
  if (todo.empty()) return Status::Ok();
  std::vector<std::string> torch_names;
  for (const auto& [i, c] : todo) torch_names.push_back(ts[i].name);
  OP_ASSIGN_OR_RETURN(auto tv, torch_side.Fetch(torch_names));
  std::unordered_map<std::string, const Tensor*> tval;
  for (const auto& o : tv) tval[o.name] = &o.tensor;
  std::unordered_map<std::string, std::unordered_map<std::string, double>> dist;
  std::vector<std::string> onames(fetch.begin(), fetch.end());
  OP_RETURN_IF_ERROR(FetchInBatches(onnx_side, onames, calls.fetch_budget, [&](const RunOutput& o) {
    if (o.tensor.empty()) return;
    for (const auto& [i, c] : todo) {
      if (std::find(c.begin(), c.end(), o.name) != c.end())
        dist[ts[i].name][o.name] = RelativeDistance(*tval[ts[i].name], o.tensor);
    }
  }));
  for (const auto& [i, cands] : todo) {
    AlignmentRow& r = al->rows[i];
    std::vector<double> d;
    for (const auto& c : cands) {
      auto& m = dist[r.torch_name];
      d.push_back(m.count(c) && !claimed.count(c) ? m[c] : HUGE_VAL);
    }
    std::string why;
    int k = ChooseByValue(d, &why);
    if (k < 0 || d[k] > kMaxDistance) continue;
    r.onnx_tensor = cands[k];
    r.method = AlignMethod::kValue;
    r.confidence = std::max(0.0, 1.0 - d[k]);
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.2g", d[k]);
    r.note = (r.note.empty() ? std::string() : r.note + "; ") +
             "paired by values alone (relative distance " + buf + "): advisory, never judged";
    claimed.insert(cands[k]);
    al->rename[r.torch_name] = cands[k];
    al->advisory.insert(r.torch_name);
  }
  return Status::Ok();
}

}  // namespace align

Status AlignByValue(Side& torch_side, Side& onnx_side, Alignment* alignment, double) {
  OP_ASSIGN_OR_RETURN(*alignment, AlignTorchCapture(torch_side, onnx_side));
  return Status::Ok();
}

}  // namespace onnxprobe
