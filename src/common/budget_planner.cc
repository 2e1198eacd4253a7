#include "onnxprobe/common/budget_planner.h"

#include <algorithm>

namespace onnxprobe {

uint64_t BudgetPlanner::Cost(const std::vector<HeldTensor>& tensors, bool* unknown) const {
  uint64_t cost = 0;
  std::unordered_set<std::string> counted;  // a name listed twice by one item counts once
  for (const auto& t : tensors) {
    if (!t.name.empty() && (names_.count(t.name) || !counted.insert(t.name).second)) continue;
    if (t.bytes == 0) *unknown = true;
    cost += t.bytes ? t.bytes : largest_;
  }
  return cost;
}

bool BudgetPlanner::Fits(const std::vector<HeldTensor>& tensors) const {
  if (budget_ == 0 || items_ == 0) return true;
  if (alone_) return false;
  bool unknown = false;
  uint64_t cost = Cost(tensors, &unknown);
  if (unknown && largest_ == 0) return false;
  return held_ + cost <= budget_;
}

void BudgetPlanner::Take(const std::vector<HeldTensor>& tensors) {
  bool unknown = false;
  held_ += Cost(tensors, &unknown);
  for (const auto& t : tensors) {
    if (!t.name.empty()) names_.insert(t.name);
  }
  ++items_;
  // an unsized item while nothing is known stands alone: nothing may join it
  alone_ = alone_ || (unknown && largest_ == 0);
}

void BudgetPlanner::Close() {
  held_ = 0;
  items_ = 0;
  alone_ = false;
  names_.clear();
}

std::vector<std::pair<size_t, size_t>> PlanBatches(
    size_t count, const std::function<std::vector<HeldTensor>(size_t)>& tensors_of, uint64_t budget,
    uint64_t largest_known) {
  std::vector<std::pair<size_t, size_t>> ranges;
  BudgetPlanner planner(budget, largest_known);
  size_t begin = 0;
  for (size_t i = 0; i < count; ++i) {
    std::vector<HeldTensor> held = tensors_of(i);
    if (!planner.Fits(held)) {
      ranges.emplace_back(begin, i);
      begin = i;
      planner.Close();
    }
    planner.Take(held);
  }
  if (begin < count) ranges.emplace_back(begin, count);
  return ranges;
}

std::vector<std::vector<std::string>> PlanNameBatches(const std::vector<std::string>& names,
                                                      const std::map<std::string, uint64_t>& sizes,
                                                      uint64_t budget) {
  uint64_t largest = 0;
  for (const auto& [name, bytes] : sizes) largest = std::max(largest, bytes);
  auto held = [&](size_t i) {
    auto it = sizes.find(names[i]);
    return std::vector<HeldTensor>{{names[i], it == sizes.end() ? 0 : it->second}};
  };
  std::vector<std::vector<std::string>> batches;
  auto ranges = PlanBatches(names.size(), held, budget, largest);
  for (const auto& [begin, end] : ranges)
    batches.emplace_back(names.begin() + begin, names.begin() + end);
  return batches;
}

}  // namespace onnxprobe
