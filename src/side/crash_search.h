// Internal: naming the node at which a run crashed, by running growing prefixes of the graph (in
// topological order) in fresh worker processes. ONNX Runtime inference builds run every node of
// a graph whatever outputs are fetched (RunOptions.only_execute_path_to_fetches works in training
// builds only), so each prefix is cut out as a model of its own (ExtractSubgraph) whose outputs
// are the tensors no node of the prefix consumes. The smallest prefix that crashes ends at the
// crashing node. A binary search: 1 + ceil(log2(n)) runs for n nodes, each paying for loading the
// runtime, cutting and sending the prefix (its weights embedded) and creating a session.
#pragma once

#include <string>
#include <vector>

#include "onnxprobe/side/isolated_side.h"
#include "side/child_process.h"

namespace onnxprobe::isolation {

// Fills crash->search and what it found for a crash of a run of `model` with `inputs`.
void SearchCrash(const Model& model, const std::vector<NamedTensor>& inputs, Keeper* keeper,
                 int max_runs, RuntimeCrash* crash);

// "; it crashes again in a fresh process at node ..." (empty when no search ran).
std::string DescribeSearch(const RuntimeCrash& crash);

}  // namespace onnxprobe::isolation
