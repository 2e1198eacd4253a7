// Internal: pairing, per-pair comparison and verdict bookkeeping shared by the full
// comparison and the bisection.
#pragma once

#include <string>
#include <vector>

#include "engine/row_budgets.h"
#include "onnxprobe/common/budget_planner.h"
#include "onnxprobe/engine/comparison.h"

namespace onnxprobe {

struct Pair {
  const SideTensor* a;
  const SideTensor* b;
};

// Pairs side A's selected tensors with side B's by exact name (or the mapping), in A's
// topological order; A's tensors that B hides (fused away) go to `hidden`. Fails when nothing
// pairs.
Expected<std::vector<Pair>> PairTensors(Side& a, Side& b, const CompareJob& job,
                                        std::vector<std::string>* only_a,
                                        std::vector<std::string>* only_b,
                                        std::vector<std::string>* hidden);

// Compares one fetched pair into a row (tolerance, metrics, verdict, grade) at the policy's
// tolerance for it, widened by `budget` (row_budgets.h: from the graph and the reference
// magnitudes). No error measured on another row changes a row's tolerance.
// With `oe` (the exact reference's value of A's tensor), the row records both sides' distance
// from it and is judged with ExactRoundingBudget.
TensorResult ComparePair(const Pair& p, const RunOutput& oa, const RunOutput& ob,
                         const CompareJob& job, const RowBudget& budget = {},
                         const RunOutput* oe = nullptr);

// A module call's output that passes using more than this share of its tolerance still carries
// an error, so it does not confirm the values inside the call (FinishResult): half, the largest
// share an output can use and still hold a second, equal error within tolerance.
constexpr double kConfirmingShare = 0.5;

// Splits pairs, in order, into batches whose tensors on both sides fit `max_memory` (0: one
// batch; the rule of common/budget_planner.h), one batch at a time, so real sizes of what was
// fetched plan the next batch: a tensor whose size shape inference could not give counts as the
// largest inferred or fetched one, and while no size is known at all a batch is one pair, fetched
// to learn one.
class BatchPlanner {
 public:
  // `with_exact`: an exact reference's float64 copy of A's tensor is held too (twice A's size).
  BatchPlanner(const std::vector<Pair>& pairs, uint64_t max_memory, bool with_exact = false);
  bool Done() const { return next_ == pairs_.size(); }
  std::vector<Pair> Next();
  void Learn(const std::vector<RunOutput>& fetched);

 private:
  const std::vector<Pair>& pairs_;
  BudgetPlanner planner_;  // unknown sizes count as the largest inferred or fetched tensor
  size_t next_ = 0;
  bool with_exact_ = false;
};

// The exact reference's values of the tensors in `batch`, by side A's name or, where its model is
// B's (A a dump or a PyTorch capture), by B's (an empty RunOutput where the reference has no such
// tensor). On failure marks `r` aborted and returns false.
bool FetchExact(Side& exact, const std::vector<Pair>& batch, std::vector<RunOutput>* fe,
                ComparisonResult* r);

// Fetches one batch from both sides. On failure marks `r` aborted (naming the side) and returns
// false; the rows compared so far stay.
bool FetchBoth(Side& a, Side& b, const std::vector<Pair>& batch, std::vector<RunOutput>* fa,
               std::vector<RunOutput>* fb, ComparisonResult* r);

// First failure, failure count, introduced/inherited roles, frontier, sides' metadata.
void FinishResult(Side& a, Side& b, const CompareJob& job, ComparisonResult* r);

}  // namespace onnxprobe
