#include "onnxprobe/side/fetch_groups.h"

#include <algorithm>
#include <unordered_map>

#include "onnxprobe/common/budget_planner.h"

namespace onnxprobe {

std::vector<std::pair<size_t, size_t>> GroupByBudget(
    const std::vector<std::set<std::string>>& needs, const std::vector<SideTensor>& captured,
    uint64_t budget) {
  std::unordered_map<std::string, uint64_t> bytes;
  uint64_t known_max = 0;
  for (const auto& t : captured) {
    bytes.emplace(t.name, t.est_bytes);
    known_max = std::max(known_max, t.est_bytes);
  }
  auto held = [&](size_t k) {
    std::vector<HeldTensor> out;
    for (const auto& n : needs[k]) {
      auto it = bytes.find(n);
      if (it != bytes.end()) out.push_back({n, it->second});
    }
    return out;
  };
  return PlanBatches(needs.size(), held, budget, known_max);
}

}  // namespace onnxprobe
