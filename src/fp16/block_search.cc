// The block list grows in rank order until the converted model passes: first by doubling the
// number of ranked nodes kept in float32, then by bisection between the last failing and the
// first passing count, so a list of k nodes costs about 2 log2(k) model runs.
#include <algorithm>

#include "common/file_util.h"
#include "fp16/fp16_context.h"
#include "fp16/fp16_metrics.h"

namespace onnxprobe {
namespace {

bool Overflows(const Fp16NodeRow& r) { return r.overflow > 0 || r.input_overflow > 0; }

// Topological indices of convertible nodes, worst first: overflow, then isolated error.
std::vector<int> Ranked(const Fp16Report& rep) {
  std::vector<int> order;
  for (const auto& r : rep.nodes) {
    if (r.eligibility == Fp16Eligibility::kConvertible) order.push_back(r.topo_index);
  }
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    const Fp16NodeRow &x = rep.nodes[a], &y = rep.nodes[b];
    if (Overflows(x) != Overflows(y)) return Overflows(x);
    return x.isolated_error > y.isolated_error;
  });
  return order;
}

// Converts with `blocked` kept in float32, runs, and judges the graph outputs.
Fp16Attempt Try(Fp16Context& cx, const std::vector<int>& blocked, std::string* bytes) {
  Fp16Report& rep = *cx.report;
  Fp16Attempt at;
  at.blocked = blocked.size();
  std::set<int> keep(blocked.begin(), blocked.end());
  auto converted = ConvertToFp16(cx.model, keep, cx.types, cx.req.storage_barriers);
  if (!converted.ok()) {
    at.error = converted.status().message();
    return at;
  }
  auto session = cx.backend.CreateSession(*converted, cx.model.dir(), cx.req.session);
  ++rep.sessions;
  if (!session.ok()) {
    at.error = session.status().message();
    return at;
  }
  std::vector<std::pair<std::string, const Tensor*>> feed;
  for (const auto& t : rep.inputs) feed.emplace_back(t.name, &t.tensor);
  std::vector<std::string> outputs;
  for (const auto& o : cx.model.summary().outputs) outputs.push_back(o.name);
  auto got = (*session)->Run(feed, outputs);
  ++rep.model_runs;
  if (!got.ok()) {
    at.error = got.status().message();
    return at;
  }
  at.passed = true;
  for (size_t i = 0; i < outputs.size() && i < got->size(); ++i) {
    auto ref = cx.values.find(outputs[i]);
    if (ref == cx.values.end() || (*got)[i].tensor.empty()) {  // never a vacuous pass
      at.passed = false;
      at.error = "graph output '" + outputs[i] + "' has no value to compare";
      continue;
    }
    PairError e =
        ComparePair(*ref->second, (*got)[i].tensor, cx.OutputAtol(outputs[i]), cx.req.rtol);
    at.nonfinite += e.nonfinite;
    if (e.worst_ratio >= at.worst_ratio) {
      at.worst_ratio = e.worst_ratio;
      at.worst_output = outputs[i];
      at.max_abs = e.max_abs;
      at.rel_error = e.rel_error;
    }
    if (!(e.worst_ratio <= 1.0)) at.passed = false;
  }
  if (at.passed) *bytes = std::move(*converted);
  return at;
}

}  // namespace

Status SearchBlockList(Fp16Context& cx) {
  Fp16Report& rep = *cx.report;
  std::vector<Fp16BlockEntry> list;
  std::set<int> in_list;
  auto add = [&](int k, Fp16BlockReason why) {
    if (!in_list.insert(k).second) return;
    const Fp16NodeRow& r = rep.nodes[k];
    list.push_back({r.node, r.op_type, k, why});
  };
  for (int k : cx.keep) add(k, Fp16BlockReason::kRequested);
  for (const auto& r : rep.nodes) {
    if (r.eligibility != Fp16Eligibility::kConvertible) continue;
    if (!r.runtime_error.empty()) add(r.topo_index, Fp16BlockReason::kRuntimeRejects);
  }
  std::vector<int> ranked = Ranked(rep);
  for (int k : ranked) {
    // An input beyond the range is the cause when there is one; the output then overflows too.
    if (rep.nodes[k].input_overflow > 0) add(k, Fp16BlockReason::kInputOverflow);
    if (rep.nodes[k].overflow > 0) add(k, Fp16BlockReason::kOverflow);
  }
  std::vector<int> rest;
  for (int k : ranked) {
    if (!in_list.count(k)) rest.push_back(k);
  }
  size_t fixed = list.size();
  size_t limit =
      cx.req.max_blocked < 0 ? fixed + rest.size() : static_cast<size_t>(cx.req.max_blocked);
  if (limit < fixed) limit = fixed;
  size_t most = std::min(rest.size(), limit - fixed);

  std::string passed_bytes;
  auto attempt = [&](size_t n) {
    std::vector<int> blocked;
    for (const auto& e : list) blocked.push_back(e.topo_index);
    blocked.insert(blocked.end(), rest.begin(), rest.begin() + n);
    std::string bytes;
    rep.attempts.push_back(Try(cx, blocked, &bytes));
    if (rep.attempts.back().passed) passed_bytes = std::move(bytes);
    return rep.attempts.back().passed;
  };
  bool over_limit = cx.req.max_blocked >= 0 && fixed > static_cast<size_t>(cx.req.max_blocked);
  bool ok = !over_limit && attempt(0);
  size_t good = 0;
  if (!ok && !over_limit) {
    size_t bad = 0, n = 1;
    while (bad < most) {
      n = std::min(n, most);
      if (attempt(n)) {
        good = n;
        ok = true;
        break;
      }
      bad = n;
      n *= 2;
    }
    while (ok && good - bad > 1) {
      size_t mid = bad + (good - bad) / 2;
      if (attempt(mid)) {
        good = mid;
      } else {
        bad = mid;
      }
    }
  }
  if (ok) {
    for (size_t i = 0; i < good; ++i) {
      const Fp16NodeRow& r = rep.nodes[rest[i]];
      list.push_back({r.node, r.op_type, rest[i], Fp16BlockReason::kError});
    }
  }
  rep.block_list = std::move(list);
  rep.passed = ok;
  if (ok && !cx.req.output_model.empty()) {
    if (cx.req.storage_barriers) {  // the model to ship has no barriers
      std::set<int> keep;
      for (const auto& e : rep.block_list) keep.insert(e.topo_index);
      OP_ASSIGN_OR_RETURN(passed_bytes, ConvertToFp16(cx.model, keep, cx.types, false));
    }
    OP_RETURN_IF_ERROR(WriteFileAtomic(cx.req.output_model, passed_bytes));
    rep.output_model = cx.req.output_model;
  }
  return Status::Ok();
}

}  // namespace onnxprobe
