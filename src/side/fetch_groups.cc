#include "onnxprobe/side/fetch_groups.h"

#include <algorithm>
#include <unordered_map>

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
  std::vector<std::pair<size_t, size_t>> ranges;
  std::set<std::string> in_range;
  uint64_t held = 0;
  size_t begin = 0;
  auto added = [&](const std::set<std::string>& want) {
    uint64_t add = 0;
    for (const auto& n : want) {
      auto it = bytes.find(n);
      if (it != bytes.end() && !in_range.count(n)) add += it->second ? it->second : known_max;
    }
    return add;
  };
  for (size_t k = 0; k < needs.size(); ++k) {
    if (budget > 0 && k > begin && held + added(needs[k]) > budget) {
      ranges.emplace_back(begin, k);
      begin = k;
      held = 0;
      in_range.clear();
    }
    held += added(needs[k]);
    in_range.insert(needs[k].begin(), needs[k].end());
  }
  if (begin < needs.size()) ranges.emplace_back(begin, needs.size());
  return ranges;
}

}  // namespace onnxprobe
