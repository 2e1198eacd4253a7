// k-ary search for the first failing tensor with a handful of tensors captured per run.
#include <algorithm>
#include <chrono>
#include <map>

#include "engine/pairing.h"
#include "engine/row_budgets.h"
#include "onnxprobe/engine/comparison.h"

namespace onnxprobe {

Expected<ComparisonResult> RunBisection(Side& a, Side& b, const CompareJob& job, size_t per_run) {
  auto t0 = std::chrono::steady_clock::now();
  OP_RETURN_IF_ERROR(job.policy.Validate());
  ComparisonResult r;
  r.policy = job.policy;
  r.bisected = true;
  OP_ASSIGN_OR_RETURN(std::vector<Pair> pairs,
                      PairTensors(a, b, job, &r.only_a, &r.only_b, &r.hidden_b));
  uint64_t largest = 0;
  for (const auto& p : pairs) largest = std::max({largest, p.a->est_bytes, p.b->est_bytes});
  size_t k = std::max<size_t>(1, per_run);
  // both sides' tensors, and the exact reference's (float64: twice A's) when there is one
  const uint64_t held = job.exact != nullptr ? 4 : 2;
  if (job.max_memory > 0 && largest > 0)
    k = std::clamp<size_t>(job.max_memory / (held * largest), 1, k);
  RowBudgets budgets(b.model());
  // Fetches a batch from both sides (and the exact reference) and compares it, row j into
  // `rows[j]`; false when a side failed (r.aborted says why).
  auto compare = [&](const std::vector<Pair>& batch, std::vector<TensorResult>* rows,
                     BatchPlanner* planner) {
    std::vector<RunOutput> fa, fb, fe;
    if (!FetchBoth(a, b, batch, &fa, &fb, &r)) return false;
    if (job.exact != nullptr && !FetchExact(*job.exact, batch, &fe, &r)) return false;
    if (planner != nullptr) {
      planner->Learn(fa);
      planner->Learn(fb);
    }
    rows->clear();
    for (size_t j = 0; j < batch.size(); ++j) {
      RowBudget budget;
      if (job.exact != nullptr) budget.roundoff_b = budgets.CarriedRoundoff(batch[j].b->name);
      rows->push_back(
          ComparePair(batch[j], fa[j], fb[j], job, budget, fe.empty() ? nullptr : &fe[j]));
      fa[j] = RunOutput();
      fb[j] = RunOutput();
      if (!fe.empty()) fe[j] = RunOutput();
    }
    return true;
  };

  std::map<size_t, TensorResult> probed;  // pair index -> row
  // invariant: every index < lo passes (as far as probed), the first failure is in [lo, hi]
  size_t lo = 0, hi = pairs.size() - 1;
  bool any_fail = false;
  while (true) {
    std::vector<size_t> picks;
    size_t span = hi - lo + 1;
    for (size_t j = 1; j <= k; ++j) {
      size_t idx = lo + (span * j) / (k + 1);
      if (span <= k) idx = lo + j - 1;
      if (idx > hi) break;
      if (probed.count(idx) || (!picks.empty() && picks.back() == idx)) continue;
      picks.push_back(idx);
    }
    if (picks.empty()) break;
    if (job.Stopped()) return InvalidArgument("comparison stopped by the caller while bisecting");
    ++r.bisect_rounds;
    std::vector<Pair> batch;
    for (size_t i : picks) batch.push_back(pairs[i]);
    std::vector<TensorResult> rows;
    if (!compare(batch, &rows, nullptr)) break;
    size_t first_fail = SIZE_MAX, last_pass = SIZE_MAX;
    for (size_t j = 0; j < picks.size(); ++j) {
      TensorResult row = std::move(rows[j]);
      if (!row.pass && first_fail == SIZE_MAX) first_fail = picks[j];
      if (row.pass && first_fail == SIZE_MAX) last_pass = picks[j];
      probed.emplace(picks[j], std::move(row));
    }
    if (first_fail != SIZE_MAX) {
      any_fail = true;
      hi = first_fail;
    }
    if (last_pass != SIZE_MAX) lo = last_pass + 1;
    if (lo > hi) break;
    if (lo == hi && probed.count(lo)) break;
    if (first_fail == SIZE_MAX && lo > pairs.size() - 1) break;
  }
  // The search found a failing tensor next to a passing one in topological order, but branches
  // interleave there: walk up the graph from it, probing the producer's inputs, until a node
  // whose compared inputs all pass (a frontier node by definition).
  const Model* graph =
      job.graph != nullptr ? job.graph : (a.model() != nullptr ? a.model() : b.model());
  if (any_fail && !r.aborted && graph != nullptr) {
    std::map<std::string, size_t> index_of;  // A name -> pair index
    for (size_t i = 0; i < pairs.size(); ++i) index_of[pairs[i].a->name] = i;
    size_t current = hi;
    for (int guard = 0; guard < 1000; ++guard) {
      const TensorEntry* t = graph->index().Find(pairs[current].a->name);
      if (t == nullptr || t->producer < 0) break;
      std::vector<size_t> ins;
      for (const auto& x : graph->index().nodes()[t->producer].inputs) {
        auto it = index_of.find(x);
        if (it != index_of.end() && std::find(ins.begin(), ins.end(), it->second) == ins.end())
          ins.push_back(it->second);
      }
      std::sort(ins.begin(), ins.end());
      std::vector<size_t> todo;
      for (size_t i : ins) {
        if (!probed.count(i)) todo.push_back(i);
      }
      for (size_t off = 0; off < todo.size(); off += k) {
        std::vector<size_t> picks(todo.begin() + off,
                                  todo.begin() + std::min(todo.size(), off + k));
        std::vector<Pair> batch;
        for (size_t i : picks) batch.push_back(pairs[i]);
        ++r.bisect_rounds;
        std::vector<TensorResult> rows;
        if (!compare(batch, &rows, nullptr)) break;
        for (size_t j = 0; j < picks.size(); ++j) probed.emplace(picks[j], std::move(rows[j]));
      }
      if (r.aborted) break;
      size_t next = SIZE_MAX;
      for (size_t i : ins) {
        if (!probed.at(i).pass) {
          next = i;
          break;
        }
      }
      if (next == SIZE_MAX)
        break;  // every compared input passes: the producer is where error starts
      current = next;
    }
  }
  // The search only tells where the first failure is. The verdict needs every tensor: the rest
  // is compared under the memory budget, so rows, frontier and verdict are the full comparison's
  // (a fault whose error fades before the outputs, or a second one downstream, is not missed).
  std::vector<Pair> rest;
  std::vector<size_t> rest_index;
  for (size_t i = 0; i < pairs.size(); ++i) {
    if (!probed.count(i)) {
      rest.push_back(pairs[i]);
      rest_index.push_back(i);
    }
  }
  size_t sweeps = 0, at = 0;
  BatchPlanner planner(rest, job.max_memory, job.exact != nullptr);
  while (!r.aborted && !planner.Done()) {
    std::vector<Pair> batch = planner.Next();
    ++sweeps;
    std::vector<TensorResult> rows;
    if (!compare(batch, &rows, &planner)) break;
    for (size_t j = 0; j < batch.size(); ++j, ++at)
      probed.emplace(rest_index[at], std::move(rows[j]));
  }
  for (auto& [i, row] : probed) r.rows.push_back(std::move(row));
  r.batches = r.bisect_rounds + sweeps;
  FinishResult(a, b, job, &r);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace onnxprobe
