#include <algorithm>
#include <cmath>

#include "onnxprobe/localize/localize.h"
#include "onnxprobe/quant/quant_session.h"
#include "quant/quant_metrics.h"

namespace onnxprobe::quant {

Expected<std::shared_ptr<QuantSession>> Attach(Side& a, Side& b, const QuantOptions& options,
                                               CompareJob* job, std::vector<std::string>* notes) {
  if (options.mode == QuantMode::kOff || a.model() == nullptr || b.model() == nullptr)
    return std::shared_ptr<QuantSession>();
  if (a.info().kind == SideKind::kTorchCapture) return std::shared_ptr<QuantSession>();
  if (DetectQuantFormat(*a.model()) != QuantFormat::kNone ||
      DetectQuantFormat(*b.model()) == QuantFormat::kNone)
    return std::shared_ptr<QuantSession>();
  std::set<std::string> hidden(b.hidden().begin(), b.hidden().end());
  auto paired = PairQuantized(*a.model(), *b.model(), hidden);
  if (!paired.ok() && paired.status().code() == ErrorCode::kInvalidArgument) {
    notes->push_back("side B is quantized but does not pair with side A by structure (" +
                     paired.status().message() + "): tensors are paired by name");
    return std::shared_ptr<QuantSession>();
  }
  OP_ASSIGN_OR_RETURN(QuantPairing p, std::move(paired));
  auto s = std::make_shared<QuantSession>();
  s->pairing = std::move(p);
  s->options = options;
  if (s->options.max_memory == 0) s->options.max_memory = job->max_memory;
  for (const auto& [x, y] : s->pairing.rename) job->rename.emplace(x, y);  // explicit entries win
  job->rename_only = true;
  QuantSession* sp = s.get();
  job->judge = [sp](const Tensor& ta, const Tensor& tb, const TolerancePolicy& policy,
                    const CompareOptions& kernel, TensorResult* row) {
    const QuantPairing& qp = sp->pairing;
    auto it = qp.params_b.find(row->name_b);
    const QuantParams* params = it == qp.params_b.end() ? nullptr : &it->second;
    Tensor deq;
    const Tensor* b_real = &tb;
    if (params != nullptr && qp.dequantize_b.count(row->name_b)) {
      auto d = Dequantize(tb, *params);
      if (d.ok()) {
        deq = std::move(*d);
        b_real = &deq;
      }
    }
    JudgeRow(ta, *b_real, policy, kernel, row);
    QuantRowMetrics q = MeasureRow(ta, *b_real, params);
    JudgeQuantRow(q, sp->options.min_sqnr_db, row);
    std::lock_guard<std::mutex> lock(sp->mu);
    sp->by_a[row->name] = std::move(q);
  };
  return s;
}

Expected<QuantReport> Finish(QuantSession& s, Side& a, Side& b,
                             const std::vector<NamedTensor>& inputs, const ComparisonResult& r) {
  QuantReport rep;
  const QuantPairing& p = s.pairing;
  rep.format = p.format;
  rep.min_sqnr_db = s.options.min_sqnr_db;
  rep.paired = p.rename.size();
  rep.by_name_hint = p.by_name_hint;
  rep.folded = p.folded;
  rep.notes = p.notes;
  for (size_t i = 0; i < r.rows.size(); ++i) {
    auto it = s.by_a.find(r.rows[i].name);
    if (it == s.by_a.end()) continue;
    QuantRowMetrics q = it->second;
    q.row = static_cast<int>(i);
    rep.rows.push_back(std::move(q));
  }
  rep.weights = p.weights;
  OP_RETURN_IF_ERROR(MeasureWeights(*a.model(), *b.model(), &rep.weights));
  if (!s.options.isolate) {
    rep.notes.push_back("layers were not isolated (isolation is off)");
  } else if (r.aborted) {
    rep.notes.push_back("layers were not isolated: the comparison ended early");
  } else {
    OP_RETURN_IF_ERROR(IsolateLayers(s, a, b, inputs, &rep));
  }
  for (QuantLayer& l : rep.layers) {
    auto it = s.by_a.find(l.tensor_a);
    l.accumulated_sqnr_db = it == s.by_a.end() ? NAN : it->second.sqnr_db;
  }
  return rep;
}

void SettleRoles(const QuantReport& q, ComparisonResult* r) {
  LocalizeResult settled;
  for (const QuantLayer& l : q.layers) {
    if (!l.isolated) continue;
    bool first = true;  // a layer's first failing row introduces (Conv, then its folded Relu)
    for (size_t i = 0; i < r->rows.size(); ++i) {
      const TensorResult& row = r->rows[i];
      if (row.pass || (row.name != l.tensor_a && row.node != l.node_a)) continue;
      settled.settled.emplace_back(static_cast<int>(i),
                                   l.below_limit && first ? Role::kIntroduced : Role::kInherited);
      first = false;
    }
  }
  if (!settled.settled.empty()) ApplyRoles(settled, r);
}

}  // namespace onnxprobe::quant
