#include "onnxprobe/engine/comparison.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <thread>
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

const char* CloserToExact(const TensorResult& row) {
  if (row.exact_error_a < 0 || row.exact_error_b < 0) return "";
  if (row.exact_error_a == row.exact_error_b) return "tie";
  return row.exact_error_a < row.exact_error_b ? "a" : "b";
}

std::vector<OpExactness> BitExactByOp(const ComparisonResult& r) {
  std::map<std::string, OpExactness> by_op;
  for (const auto& row : r.rows) {
    if (row.state != RowState::kCompared || row.op_type.empty()) continue;
    OpExactness& e = by_op[row.op_type];
    e.op_type = row.op_type;
    ++e.compared;
    bool exact = row.metrics.shape_match && row.metrics.dtype_match &&
                 row.metrics.exact_matches == row.metrics.count;
    if (exact) ++e.bit_exact;
  }
  std::vector<OpExactness> out;
  for (auto& [op, e] : by_op) out.push_back(e);
  return out;
}

ExactCloseness SummarizeCloseness(const ComparisonResult& r) {
  ExactCloseness c;
  for (const auto& row : r.rows) {
    std::string closer = CloserToExact(row);
    if (closer.empty()) continue;
    ++c.rows;
    c.closer_a += closer == "a";
    c.closer_b += closer == "b";
    c.ties += closer == "tie";
    double scale = std::max(row.metrics.scale, 1e-30);
    if (row.exact_error_a / scale > c.worst_a) {
      c.worst_a = row.exact_error_a / scale;
      c.worst_a_row = row.name;
    }
    if (row.exact_error_b / scale > c.worst_b) {
      c.worst_b = row.exact_error_b / scale;
      c.worst_b_row = row.name_b;
    }
  }
  return c;
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
  const TensorMetrics& m = row->metrics;
  uint64_t n = a.num_elements();
  if (n > 0 && m.count == 0 && m.stats_a.nan_count == n &&
      m.stats_b.nan_count == b.num_elements()) {
    row->all_nan = true;
    row->state = RowState::kNotCompared;
    row->reason =
        "every value is NaN on both sides (" + std::to_string(n) + "): nothing to compare";
    row->tolerance_ratio = 0;
  }
}

namespace {

// Tensors compared two at a time need this many elements together to pay for a second thread:
// comparing costs about a nanosecond an element (2^20 elements, a millisecond: see
// kElementsPerCompareThread), starting and joining a thread tens of microseconds, so at 2^18
// (about 0.25 ms) the thread costs a tenth or less of what it takes over.
constexpr uint64_t kParallelRowsElements = uint64_t(1) << 18;

// Compares rows [begin, end) of a batch into `rows`, each with its budget already set in
// `budgets`, freeing each pair's tensors once compared. The side's runtime idles meanwhile: rows
// the kernel splits across threads itself go one by one, the others two at a time (each row is
// computed as it would be alone, whatever thread takes it).
void CompareRows(const std::vector<Pair>& batch, std::vector<RunOutput>* va,
                 std::vector<RunOutput>* vb, std::vector<RunOutput>* ve, const CompareJob& job,
                 const std::vector<RowBudget>& budgets, size_t begin, size_t end,
                 std::vector<TensorResult>* rows) {
  auto one = [&](size_t i) {
    const RunOutput* oe = ve->empty() ? nullptr : &(*ve)[i];
    (*rows)[i] = ComparePair(batch[i], (*va)[i], (*vb)[i], job, budgets[i], oe);
    (*va)[i] = RunOutput();  // free both sides' tensor before the next one
    (*vb)[i] = RunOutput();
    if (!ve->empty()) (*ve)[i] = RunOutput();
  };
  std::vector<size_t> shared;
  uint64_t elements = 0;
  for (size_t i = begin; i < end; ++i) {
    uint64_t n = (*va)[i].tensor.num_elements();
    if (n >= 2 * kElementsPerCompareThread || job.judge) {
      one(i);  // the kernel's own threads (a custom judge is called from this thread only)
    } else {
      shared.push_back(i);
      elements += n;
    }
  }
  std::atomic<size_t> next{0};
  auto take = [&] {
    for (size_t k = next++; k < shared.size(); k = next++) one(shared[k]);
  };
  if (elements < kParallelRowsElements || std::thread::hardware_concurrency() < 2) {
    take();
    return;
  }
  std::thread second(take);
  take();
  second.join();
}

}  // namespace

Expected<ComparisonResult> RunComparison(Side& a, Side& b, const CompareJob& job,
                                         const RowCallback& on_row) {
  auto t0 = std::chrono::steady_clock::now();
  OP_RETURN_IF_ERROR(job.policy.Validate());
  ComparisonResult r;
  r.policy = job.policy;

  OP_ASSIGN_OR_RETURN(std::vector<Pair> pairs,
                      PairTensors(a, b, job, &r.only_a, &r.only_b, &r.hidden_b));

  BatchPlanner planner(pairs, job.max_memory, job.exact != nullptr);
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
    std::vector<RunOutput> va, vb, ve;
    if (!FetchBoth(a, b, batch, &va, &vb, &r)) break;
    if (job.exact != nullptr && !FetchExact(*job.exact, batch, &ve, &r)) break;
    planner.Learn(va);
    planner.Learn(vb);
    // a row whose budget reads earlier rows starts a run of rows compared together: the rows
    // before it are recorded by then, and no other row of the run reads any
    std::vector<TensorResult> rows(batch.size());
    std::vector<RowBudget> row_budgets(batch.size());
    for (size_t begin = 0, end = 0; begin < batch.size(); begin = end) {
      end = begin + 1;
      while (end < batch.size() && !budgets.ReadsEarlierRows(batch[end].b->name)) ++end;
      for (size_t i = begin; i < end; ++i) {
        row_budgets[i] = budgets.For(batch[i].b->name);
        if (job.exact != nullptr)
          row_budgets[i].roundoff_b = budgets.CarriedRoundoff(batch[i].b->name);
      }
      CompareRows(batch, &va, &vb, &ve, job, row_budgets, begin, end, &rows);
      for (size_t i = begin; i < end; ++i) {
        if (rows[i].all_nan && (batch[i].a->is_graph_output || batch[i].b->is_graph_output)) {
          r.nan_outputs.push_back(
              "graph output '" + rows[i].name_b +
              "' holds only NaN on both sides: none of its values was compared");
        }
        budgets.Record(rows[i]);
        r.rows.push_back(std::move(rows[i]));
        ++done;
        if (on_row) on_row(r.rows.back(), done, pairs.size());
      }
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
