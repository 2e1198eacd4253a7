#include "localize/growth.h"

#include <cmath>
#include <set>

namespace onnxprobe {
namespace {

struct Trace {
  double worst_snr = INFINITY;
  bool known = true, identical = true, via_b_only = false;
};

// Walks back from `name` through producers that have no row (nodes only in B) to compared rows,
// graph inputs and initializers.
void TraceInput(const GraphIndex& g, const std::string& name,
                const std::unordered_map<std::string, int>& row_of, const ComparisonResult& r,
                std::set<std::string>* seen, int depth, Trace* t) {
  if (name.empty() || !seen->insert(name).second) return;
  auto it = row_of.find(name);
  if (it != row_of.end()) {
    const TensorResult& row = r.rows[it->second];
    if (!RowIdentical(row)) {
      t->identical = false;
      t->worst_snr = std::min(t->worst_snr, row.metrics.snr_db);
    }
    return;
  }
  const TensorEntry* e = g.Find(name);
  if (e == nullptr) {
    t->known = false;
    return;
  }
  if (e->kind == TensorKind::kGraphInput || e->kind == TensorKind::kInitializer) return;
  if (e->producer < 0 || depth >= 16) {
    t->known = false;
    return;
  }
  t->via_b_only = true;
  for (const auto& in : g.nodes()[e->producer].inputs)
    TraceInput(g, in, row_of, r, seen, depth + 1, t);
}

}  // namespace

std::vector<RowGrowth> ErrorGrowth(const Model& graph, const ComparisonResult& r) {
  const GraphIndex& g = graph.index();
  std::unordered_map<std::string, int> row_of;
  for (size_t i = 0; i < r.rows.size(); ++i) {
    if (r.rows[i].state != RowState::kNotCompared) row_of.emplace(r.rows[i].name_b, int(i));
  }
  std::vector<RowGrowth> out;
  for (size_t i = 0; i < r.rows.size(); ++i) {
    RowGrowth rg;
    rg.row = static_cast<int>(i);
    const TensorResult& row = r.rows[i];
    const TensorEntry* e = g.Find(row.name_b);
    if (e == nullptr || e->producer < 0) {
      rg.inputs_known = false;
      rg.growth_db = RowIdentical(row) ? -INFINITY : INFINITY;
      out.push_back(rg);
      continue;
    }
    Trace t;
    std::set<std::string> seen{row.name_b};
    const NodeInfo& n = g.nodes()[e->producer];
    std::vector<std::string> reads = n.inputs;
    reads.insert(reads.end(), n.implicit_inputs.begin(), n.implicit_inputs.end());
    for (const auto& in : reads) TraceInput(g, in, row_of, r, &seen, 0, &t);
    rg.inputs_known = t.known;
    rg.inputs_identical = t.identical;
    rg.via_b_only = t.via_b_only;
    if (RowIdentical(row)) {
      rg.growth_db = -INFINITY;
    } else {
      double snr = row.metrics.snr_db;
      rg.growth_db = std::isinf(t.worst_snr) ? INFINITY : t.worst_snr - snr;
    }
    out.push_back(rg);
  }
  return out;
}

}  // namespace onnxprobe
