// Value-based fallback: when names give no answer, the same-size ONNX tensor near the expected
// position whose values are closest (cosine similarity). Always reported, never silent.
#include <algorithm>
#include <cmath>
#include <set>
#include <unordered_map>

#include "onnxprobe/align.h"
#include "onnxprobe/compare.h"

namespace onnxprobe {

Status AlignByValue(Side& torch_side, Side& onnx_side, Alignment* al, double min_cosine) {
  const auto& ot = onnx_side.tensors();
  std::unordered_map<std::string, int> onnx_pos;
  for (size_t i = 0; i < ot.size(); ++i) onnx_pos[ot[i].name] = static_cast<int>(i);
  std::unordered_map<std::string, const SideTensor*> torch_by_name;
  for (const auto& t : torch_side.tensors()) torch_by_name[t.name] = &t;
  std::set<std::string> claimed;
  for (const auto& r : al->rows) {
    if (!r.onnx_tensor.empty()) claimed.insert(r.onnx_tensor);
  }
  // expected ONNX position of row i: the position of the nearest matched row before it
  std::vector<int> expected(al->rows.size(), 0);
  int last = 0;
  for (size_t i = 0; i < al->rows.size(); ++i) {
    auto it = onnx_pos.find(al->rows[i].onnx_tensor);
    if (it != onnx_pos.end()) last = it->second;
    expected[i] = last;
  }
  std::vector<std::pair<size_t, std::vector<std::string>>> todo;
  std::set<std::string> fetch_onnx;
  std::vector<std::string> fetch_torch;
  for (size_t i = 0; i < al->rows.size(); ++i) {
    const AlignmentRow& r = al->rows[i];
    if (!r.onnx_tensor.empty() || r.note.rfind("fused", 0) == 0 || r.method == "container")
      continue;
    auto tt = torch_by_name.find(r.torch_name);
    if (tt == torch_by_name.end() || tt->second->est_bytes == 0) continue;
    std::vector<std::string> cands;
    for (int d = -24; d <= 24; ++d) {
      int k = expected[i] + d;
      if (k < 0 || k >= static_cast<int>(ot.size())) continue;
      if (ot[k].est_bytes == tt->second->est_bytes && !claimed.count(ot[k].name))
        cands.push_back(ot[k].name);
    }
    if (cands.empty() || fetch_onnx.size() + cands.size() > 256) continue;
    fetch_onnx.insert(cands.begin(), cands.end());
    fetch_torch.push_back(r.torch_name);
    todo.emplace_back(i, std::move(cands));
  }
  if (todo.empty()) return Status::Ok();
  OP_ASSIGN_OR_RETURN(auto tvals, torch_side.Fetch(fetch_torch));
  std::vector<std::string> onames(fetch_onnx.begin(), fetch_onnx.end());
  OP_ASSIGN_OR_RETURN(auto ovals, onnx_side.Fetch(onames));
  std::unordered_map<std::string, const Tensor*> ov;
  for (const auto& o : ovals) ov[o.name] = &o.tensor;
  CompareOptions k;
  k.channels = false;
  for (size_t n = 0; n < todo.size(); ++n) {
    AlignmentRow& r = al->rows[todo[n].first];
    const Tensor& a = tvals[n].tensor;
    double best = -2;
    std::string best_name;
    for (const auto& c : todo[n].second) {
      const Tensor* b = ov[c];
      if (b == nullptr || b->shape() != a.shape() || b->dtype() != a.dtype() || claimed.count(c))
        continue;
      double cos = CompareTensors(a, *b, Tolerance(), -1, k).cosine;
      if (cos > best) {
        best = cos;
        best_name = c;
      }
    }
    if (best_name.empty() || best < min_cosine) continue;
    r.onnx_tensor = best_name;
    r.method = "value";
    r.confidence = best;
    r.note = "matched by values (cosine " + std::to_string(best) + "); names gave no answer";
    claimed.insert(best_name);
    al->rename[r.torch_name] = best_name;
  }
  return Status::Ok();
}

}  // namespace onnxprobe
