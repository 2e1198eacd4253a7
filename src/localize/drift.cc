// Drift origins: where differences of any size are born, also when every row passes.
#include <algorithm>
#include <set>

#include "localize/isolation.h"
#include "onnxprobe/side/fetch_groups.h"

namespace onnxprobe::isolation {

std::vector<int> ByGrowth(std::vector<int> rows, const std::vector<RowGrowth>& growth, size_t max,
                          size_t* dropped) {
  std::stable_sort(rows.begin(), rows.end(),
                   [&](int x, int y) { return growth[x].growth_db > growth[y].growth_db; });
  if (rows.size() > max) {
    if (dropped != nullptr) *dropped = rows.size() - max;
    rows.resize(max);
  }
  return rows;
}

// A region side B's optimizer fused (a Conv with the Relu after it, a decomposed LayerNorm) is
// named by the node the fusion starts from, the first whose output B fuses away, which computes
// what the rest (an activation it absorbed, say) only finishes; the region's nodes stay listed.
// A node that only moves or copies values (an Identity an exporter put before the computation,
// which B's optimizer removes) or makes a value fixed by the model (a Constant, a weight's
// transform) computes nothing from the data: the first computing one is named.
void NameFusion(const Ctx& cx, const Plan& p, Culprit* c) {
  const GraphIndex& idx = cx.g.index();
  int first = -1;  // the first fused node, and the first of those that computes
  for (int k : p.nodes) {
    const NodeInfo& n = idx.nodes()[k];
    bool fused = false, fixed = true;
    for (const auto& o : n.outputs) {
      fused = fused || cx.hidden_b.count(o) > 0;
      fixed = fixed && (o.empty() || FixedByModel(idx, o));
    }
    if (!fused) continue;
    bool computes = !MovesDataOnly(n.op_type) && !fixed;
    if (first < 0 || computes) first = k;
    if (computes) break;
  }
  if (first < 0) return;
  const NodeInfo& n = idx.nodes()[first];
  std::string last = c->node;
  c->node = NodeName(n, first);
  c->op_type = n.op_type;
  if (last != c->node) c->reason += "; B's optimizer fuses it with the nodes up to " + last;
}

// The largest absolute difference of a run's output from side A's.
double MaxAbs(const Ctx& cx, const Run& run) {
  TensorResult t;
  JudgeRow(*run.expected, run.observed, cx.job.policy, cx.job.kernel, &t);
  return t.metrics.max_abs;
}

bool CrossesFusion(const Ctx& cx, const Plan& p) {
  return p.error.empty() && std::any_of(p.boundary.begin(), p.boundary.end(),
                                        [&](const auto& x) { return cx.hidden_b.count(x) > 0; });
}

// Where differences of any size are born: rows whose inputs are bit-exact introduce theirs by
// construction; others are run alone with A's inputs and compared bitwise.
std::set<std::string> Drift(Ctx& cx, const LocalizeOptions& o,
                            const std::vector<RowGrowth>& growth) {
  std::vector<int> direct, others;
  for (const auto& gr : growth) {
    const TensorResult& row = cx.r.rows[gr.row];
    if (row.state == RowState::kNotCompared || RowIdentical(row)) continue;
    if (gr.inputs_known && gr.inputs_identical && !gr.via_b_only)
      direct.push_back(gr.row);
    else
      others.push_back(gr.row);
  }
  others = ByGrowth(others, growth, o.max_drift_candidates, &cx.out->drift_unexamined);
  std::vector<Culprit>& found = cx.out->drift_origins;
  std::set<std::string> confirmed;
  for (int i : direct) {
    const TensorResult& row = cx.r.rows[i];
    Plan plan = MakePlan(cx, row.name_b, o.max_subgraph_nodes);
    Culprit c = Describe(cx, plan, i);
    NarrowToSource(cx, plan, &c);
    c.error.clear();
    c.metrics = row.metrics;
    c.introduced = true;
    c.reason = "its inputs are bit-exact on both sides";
    NameStaticReader(cx, &c);
    found.push_back(std::move(c));
  }
  // a plan fed inside a region side B fuses runs unfused and matches A bit for bit: such plans
  // get a second one through the fused region (`whole`), run when the first shows nothing
  std::vector<Plan> all, whole;
  std::set<int> regions;  // rows named by a plan through a fused region
  for (int i : others) {
    all.push_back(MakePlan(cx, cx.r.rows[i].name_b, o.max_subgraph_nodes));
    const Plan& p = all.back();
    bool crosses = CrossesFusion(cx, p);
    whole.push_back(crosses ? MakePlan(cx, p.name_b, o.max_subgraph_nodes, {}, true) : Plan());
    if (!crosses) whole.back().error = "crosses no fused region";
  }
  std::vector<std::set<std::string>> needs = NeedsOf(cx, all), needs_whole = NeedsOf(cx, whole);
  for (size_t k = 0; k < needs.size(); ++k)
    needs[k].insert(needs_whole[k].begin(), needs_whole[k].end());
  for (const auto& [begin, end] : GroupByBudget(needs, cx.a.tensors(), cx.job.max_memory)) {
    std::vector<Plan> plans(all.begin() + begin, all.begin() + end);
    std::vector<Plan> fused(whole.begin() + begin, whole.begin() + end);
    std::vector<int> rows(others.begin() + begin, others.begin() + end);
    cx.from_a.clear();
    std::vector<Plan> both = plans;  // one run of side A for both kinds
    both.insert(both.end(), fused.begin(), fused.end());
    if (!FetchFor(cx, both).ok()) break;
    for (size_t k = 0; k < plans.size(); ++k) {
      if (!plans[k].error.empty()) continue;
      Run run = Execute(cx, plans[k]);
      if (!run.error.empty()) continue;
      if (run.observed.BitwiseEqual(*run.expected)) {
        if (!fused[k].error.empty()) continue;
        plans[k] = fused[k];
        run = Execute(cx, plans[k]);
        if (!run.error.empty() || run.observed.BitwiseEqual(*run.expected)) continue;
        regions.insert(rows[k]);
      } else if (fused[k].error.empty()) {
        // the node differs alone, and B fuses away what feeds it: run through the region too.
        // Fed A's values the node computes what it computed alone, bit for bit, unless the
        // region before it computes differently (a fault in a fused Conv, its own rounding):
        // then the region is a source, and the node's own difference is part of what it shows
        // A region that only repeats the node's own difference (within twice it: a changed
        // epsilon of a LayerNorm B fuses with the Add before it) leaves the node named.
        Run through = Execute(cx, fused[k]);
        if (through.error.empty() && !through.observed.BitwiseEqual(run.observed) &&
            MaxAbs(cx, through) > 2 * MaxAbs(cx, run)) {
          plans[k] = fused[k];
          run = std::move(through);
          regions.insert(rows[k]);
        }
      }
      const TensorResult& row = cx.r.rows[rows[k]];
      Culprit c = Describe(cx, plans[k], rows[k]);
      TensorResult iso;
      iso.tolerance = row.tolerance;
      JudgeRow(*run.expected, run.observed, cx.job.policy, cx.job.kernel, &iso);
      c.metrics = iso.metrics;
      c.isolated = true;
      c.accumulated_max_rel = row.metrics.max_rel;
      if (BypassRoundTrips(cx, plans[k], row.tolerance, false, &c)) {
        confirmed.insert(c.node);  // removing it removes the difference: an origin at any size
      } else {
        Bypass(cx, plans[k], row.tolerance, &c);
        NarrowToSource(cx, plans[k], &c);
      }
      c.introduced = true;
      const Plan& used = plans[k];
      size_t computing = used.nodes.size() - used.weight_nodes;
      c.reason = computing == 1 ? "differs when run alone with A's exact inputs"
                                : "differs when its " + std::to_string(computing) +
                                      " nodes run together with A's exact inputs";
      if (used.weight_nodes > 0)
        c.reason += " (and " + std::to_string(used.weight_nodes) +
                    " that prepare B's weights from its initializers)";
      if (regions.count(rows[k]) && !confirmed.count(c.node)) NameFusion(cx, plans[k], &c);
      NameStaticReader(cx, &c);
      found.push_back(std::move(c));
    }
  }
  cx.from_a.clear();
  // a fused region that holds a node named on its own (or by a smaller region) already carries
  // that node's difference: chained regions would repeat it, so only the innermost are kept
  std::set<size_t> repeats;
  for (size_t i = 0; i < found.size(); ++i) {
    if (!regions.count(found[i].row)) continue;
    for (size_t j = 0; j < found.size(); ++j) {
      const Culprit& f = found[j];
      bool smaller = !regions.count(f.row) || f.nodes.size() < found[i].nodes.size();
      if (j != i && smaller && f.node != found[i].node &&
          std::count(found[i].nodes.begin(), found[i].nodes.end(), f.node))
        repeats.insert(i);
    }
  }
  for (auto it = repeats.rbegin(); it != repeats.rend(); ++it) found.erase(found.begin() + *it);
  if (cx.framework_noise) {  // every node differs a little: only those standing out are origins
    double level = StandOutLevel(cx, found);
    found.erase(std::remove_if(found.begin(), found.end(),
                               [&](const Culprit& f) {
                                 return !confirmed.count(f.node) &&
                                        ScaleNormalized(f.metrics) < level;
                               }),
                found.end());
  }
  // largest source first: a Cast round trip whose removal removes the difference, then by the
  // error each makes on its own over its reference's magnitude (a float16 round trip, 2^-12, ahead
  // of the float32 rounding of the fusions an optimized side runs, ~1e-7), then graph order
  std::stable_sort(found.begin(), found.end(), [&](const Culprit& x, const Culprit& y) {
    bool cx_ = confirmed.count(x.node) > 0, cy_ = confirmed.count(y.node) > 0;
    if (cx_ != cy_) return cx_;
    double ex = ScaleNormalized(x.metrics), ey = ScaleNormalized(y.metrics);
    if (ex != ey) return ex > ey;
    return x.row < y.row;
  });
  // several rows can pair with one tensor (a module and its container): one origin per node
  std::set<std::string> named;
  found.erase(std::remove_if(found.begin(), found.end(),
                             [&](const Culprit& f) { return !named.insert(f.node).second; }),
              found.end());
  return confirmed;
}

}  // namespace onnxprobe::isolation
