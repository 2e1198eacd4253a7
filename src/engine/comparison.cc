#include "onnxprobe/engine/comparison.h"

#include <algorithm>
#include <chrono>
#include <unordered_map>
#include <unordered_set>

#include "engine/pairing.h"
#include "engine/row_budgets.h"
#include "onnxprobe/engine/index_ties.h"

namespace onnxprobe {

const char* RoleName(Role r) {
  switch (r) {
    case Role::kPass:
      return "pass";
    case Role::kIntroduced:
      return "introduced";
    case Role::kInherited:
      return "inherited";
  }
  return "?";
}

const char* EvidenceName(Evidence e) { return e == Evidence::kParity ? "parity" : "isolation"; }

const char* RowStateName(RowState s) {
  switch (s) {
    case RowState::kCompared:
      return "compared";
    case RowState::kNotCompared:
      return "not-compared";
    case RowState::kAdvisory:
      return "advisory";
  }
  return "?";
}

std::vector<int> FrontierOf(const ComparisonResult& r) {
  std::vector<int> out;
  std::unordered_set<std::string> seen;
  for (size_t i = 0; i < r.rows.size(); ++i) {
    if (r.rows[i].role == Role::kIntroduced && seen.insert(r.rows[i].name_b).second)
      out.push_back(static_cast<int>(i));
  }
  return out;
}

bool RowIdentical(const TensorResult& row) {
  const TensorMetrics& m = row.metrics;
  return row.state == RowState::kNotCompared ||
         (m.shape_match && m.dtype_match && m.nonfinite_differ == 0 && m.exact_matches == m.count);
}

void JudgeRow(const Tensor& a, const Tensor& b, const TolerancePolicy& policy,
              const CompareOptions& kernel, TensorResult* row) {
  row->metrics =
      CompareTensors(a, b, row->tolerance, policy.rel_eps, KernelOptionsFor(policy, kernel));
  row->reason.clear();
  row->within_tolerance = Judge(row->metrics, row->tolerance, policy.judge, &row->reason);
  row->pass = row->within_tolerance || row->state == RowState::kAdvisory;
  row->grade = GradeFor(row->metrics.max_rel);
  row->tolerance_ratio = ToleranceRatio(row->metrics, row->tolerance, policy.judge);
}

Expected<ComparisonResult> RunComparison(Side& a, Side& b, const CompareJob& job,
                                         const RowCallback& on_row) {
  auto t0 = std::chrono::steady_clock::now();
  OP_RETURN_IF_ERROR(job.policy.Validate());
  ComparisonResult r;
  r.policy = job.policy;

  OP_ASSIGN_OR_RETURN(std::vector<Pair> pairs,
                      PairTensors(a, b, job, &r.only_a, &r.only_b, &r.hidden_b));

  BatchPlanner planner(pairs, job.max_memory);
  size_t done = 0;
  // budgets from the graph and the reference magnitudes (Sin/Cos, data movement)
  RowBudgets budgets(b.model());
  while (!planner.Done()) {
    if (job.Stopped()) {
      return InvalidArgument("comparison stopped by the caller after " + std::to_string(done) +
                             " of " + std::to_string(pairs.size()) + " tensors");
    }
    std::vector<Pair> batch = planner.Next();
    ++r.batches;
    std::vector<RunOutput> va, vb;
    if (!FetchBoth(a, b, batch, &va, &vb, &r)) break;
    planner.Learn(va);
    planner.Learn(vb);
    for (size_t i = 0; i < batch.size(); ++i) {
      RunOutput& oa = va[i];
      RunOutput& ob = vb[i];
      TensorResult row = ComparePair(batch[i], oa, ob, job, budgets.For(batch[i].b->name));
      budgets.Record(row);
      oa = RunOutput();  // free both sides' tensor before the next one
      ob = RunOutput();
      r.rows.push_back(std::move(row));
      ++done;
      if (on_row) on_row(r.rows.back(), done, pairs.size());
    }
  }

  const Model* graph =
      job.graph != nullptr ? job.graph : (b.model() != nullptr ? b.model() : a.model());
  if (graph != nullptr && !r.aborted) SettleIndexTies(a, b, *graph, &r);
  FinishResult(a, b, job, &r);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return r;
}

}  // namespace onnxprobe
