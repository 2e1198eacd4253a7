// The block list grows in rank order until the converted model passes: first by doubling the
// number of ranked nodes kept in float32, then by bisection between the last failing and the
// first passing count, so a list of k nodes costs about 2 log2(k) model runs.
#include <algorithm>
#include <filesystem>
#include <unordered_map>

#include "common/file_util.h"
#include "fp16/fp16_context.h"
#include "fp16/fp16_metrics.h"
#include "onnxprobe/common/format.h"

namespace onnxprobe {
namespace {

// A node whose isolated error exceeds this many times the round-trip error of its own outputs
// owes it to its float16 inputs.
constexpr double kInputSensitivity = 4.0;

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

// The written model against what float16 should have saved (Fp16Report::size_note).
void NoteSize(const Model& m, uint64_t written, Fp16Report* rep) {
  std::error_code ec;
  uint64_t before = std::filesystem::file_size(m.path(), ec);
  if (ec) return;
  for (const auto& i : m.summary().initializers) before += i.external ? i.num_bytes : 0;
  rep->output_bytes = written;
  rep->float32_weight_bytes = m.summary().float32_param_bytes;
  const uint64_t expected = rep->float32_weight_bytes / 2;  // every float32 weight halved
  const uint64_t saved = before > written ? before - written : 0;
  if (expected == 0 || saved >= expected / 2) return;
  rep->size_note = "the converted model is " + FormatBytes(written) + " against " +
                   FormatBytes(before) + ": it saves " + FormatBytes(saved) + " of the " +
                   FormatBytes(expected) + " float16 would save on the " +
                   FormatBytes(rep->float32_weight_bytes) +
                   " of float32 weights, so most weights stayed float32 (blocked nodes read them)";
}

Fp16BlockEntry Entry(const Fp16NodeRow& r, Fp16BlockReason why) {
  Fp16BlockEntry e{r.node, r.op_type, r.topo_index, why};
  e.isolated_error = r.isolated_error;
  e.storage_error = r.storage_error;
  e.beyond_storage = LosesMoreThanFp16Storage(r);
  return e;
}

}  // namespace

Status SearchBlockList(Fp16Context& cx) {
  Fp16Report& rep = *cx.report;
  std::vector<Fp16BlockEntry> list;
  std::set<int> in_list;
  auto add = [&](int k, Fp16BlockReason why) {
    if (!in_list.insert(k).second) return;
    list.push_back(Entry(rep.nodes[k], why));
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
  // The rest in rank order, each node with the producers of its inputs when its error comes
  // from float16 inputs (it is far above what storing its own outputs in float16 costs): keeping
  // such a node in float32 helps only if its inputs are float32 too (cancellation in a Sub of
  // nearly equal values, a Div by a small difference, ...).
  std::unordered_map<std::string, double> roundtrip;
  for (const auto& t : rep.tensors) roundtrip[t.name] = t.roundtrip_error;
  const GraphIndex& idx = cx.model.index();
  std::vector<std::pair<int, Fp16BlockReason>> rest;  // in the order they join the list
  std::vector<size_t> group_end;                      // rest[0, group_end[g]) = first g + 1 groups
  std::set<int> taken = in_list;
  for (int k : ranked) {
    if (taken.count(k)) continue;
    taken.insert(k);
    rest.emplace_back(k, Fp16BlockReason::kError);
    const Fp16NodeRow& r = rep.nodes[k];
    const NodeInfo& n = idx.nodes()[k];
    double storage = 0;
    for (const auto& o : n.outputs) {
      auto it = roundtrip.find(o);
      if (it != roundtrip.end()) storage = std::max(storage, it->second);
    }
    if (r.isolated_error > 1e-3 && r.isolated_error > kInputSensitivity * storage) {
      for (const auto& x : n.inputs) {
        const TensorEntry* e = x.empty() ? nullptr : idx.Find(x);
        if (e == nullptr || e->producer < 0 || taken.count(e->producer)) continue;
        if (rep.nodes[e->producer].eligibility != Fp16Eligibility::kConvertible) continue;
        taken.insert(e->producer);
        rest.emplace_back(e->producer, Fp16BlockReason::kFeedsSensitive);
      }
    }
    group_end.push_back(rest.size());
  }
  size_t fixed = list.size();
  size_t limit =
      cx.req.max_blocked < 0 ? fixed + rest.size() : static_cast<size_t>(cx.req.max_blocked);
  if (limit < fixed) limit = fixed;
  size_t most = 0;  // groups that fit the limit
  while (most < group_end.size() && group_end[most] <= limit - fixed) ++most;

  std::string passed_bytes;
  auto attempt = [&](size_t groups) {
    std::vector<int> blocked;
    for (const auto& e : list) blocked.push_back(e.topo_index);
    size_t end = groups == 0 ? 0 : group_end[groups - 1];
    for (size_t i = 0; i < end; ++i) blocked.push_back(rest[i].first);
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
    for (size_t i = 0; good > 0 && i < group_end[good - 1]; ++i) {
      list.push_back(Entry(rep.nodes[rest[i].first], rest[i].second));
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
    NoteSize(cx.model, passed_bytes.size(), &rep);
  }
  return Status::Ok();
}

}  // namespace onnxprobe
