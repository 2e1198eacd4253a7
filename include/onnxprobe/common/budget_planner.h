// One rule for splitting ordered work under a memory budget (`--max-memory`), used by every module
// that batches: capture's runs, the comparison's and bisection's fetches, determinism's groups,
// localization's and quantization's isolation groups, the PyTorch alignment's fetches and fp16's
// isolation runs.
//
// The rule: items are placed in order; an item costs the bytes of the tensors it holds that its
// batch does not hold yet (a named tensor counts once per batch; an unnamed one always counts); a
// batch closes before the item that would take it over the budget, and an item larger than the
// budget gets a batch of its own. A tensor of unknown size (0 bytes) counts as the largest size
// known, given up front or learned from what was fetched; while no size at all is known, an item
// holding an unknown tensor gets a batch of its own, so a budget the user set is never spent on a
// guess. Budget 0: no limit, one batch.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace onnxprobe {

// One tensor an item holds while its batch runs. An empty name is never shared with another item.
struct HeldTensor {
  std::string name;
  uint64_t bytes = 0;  // 0: unknown
};

class BudgetPlanner {
 public:
  explicit BudgetPlanner(uint64_t budget, uint64_t largest_known = 0)
      : budget_(budget), largest_(largest_known) {}

  // Whether an item holding `tensors` may join the open batch (always, when it is empty).
  bool Fits(const std::vector<HeldTensor>& tensors) const;
  // Adds the item to the open batch.
  void Take(const std::vector<HeldTensor>& tensors);
  // Closes the open batch; the next item opens a new one.
  void Close();
  // A size seen later (a fetched tensor): unknown sizes count as at least this from now on.
  void Learn(uint64_t bytes) { largest_ = bytes > largest_ ? bytes : largest_; }

  bool empty() const { return items_ == 0; }
  uint64_t held() const { return held_; }

 private:
  uint64_t Cost(const std::vector<HeldTensor>& tensors, bool* unknown) const;

  uint64_t budget_;
  uint64_t largest_;
  uint64_t held_ = 0;
  size_t items_ = 0;
  bool alone_ = false;  // the open batch holds an unsized item while no size is known
  std::unordered_set<std::string> names_;
};

// Splits `count` items into consecutive ranges [begin, end) by the rule above; `tensors_of(i)` is
// what item i holds. Empty when count is 0.
std::vector<std::pair<size_t, size_t>> PlanBatches(
    size_t count, const std::function<std::vector<HeldTensor>(size_t)>& tensors_of, uint64_t budget,
    uint64_t largest_known = 0);

// The same for a list of names, each one item of its size in `sizes` (a name it lacks, or holds
// as 0, is unknown; the largest size it holds is the largest known); returns the names batch by
// batch.
std::vector<std::vector<std::string>> PlanNameBatches(const std::vector<std::string>& names,
                                                      const std::map<std::string, uint64_t>& sizes,
                                                      uint64_t budget);

}  // namespace onnxprobe
