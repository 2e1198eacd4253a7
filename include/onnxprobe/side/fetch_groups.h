// Groups of work items whose side-A tensors fit a memory budget: one fetch (one run of side A)
// per group. Used by localization's drift candidates and by the quantized layers' isolation.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "onnxprobe/side/side.h"

namespace onnxprobe {

// Splits items, in order, into ranges [begin, end) whose tensors (`needs[i]`, each counted once
// per range) fit `budget` bytes, by the one rule of common/budget_planner.h (0: one range). A
// tensor `captured` lists with an unknown size counts as the largest known one; a name it does
// not list (a shared input) is not fetched and costs nothing.
std::vector<std::pair<size_t, size_t>> GroupByBudget(
    const std::vector<std::set<std::string>>& needs, const std::vector<SideTensor>& captured,
    uint64_t budget);

}  // namespace onnxprobe
