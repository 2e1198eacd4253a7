// Per-node isolation around the comparison's frontier.
//
// Stage 1 runs each candidate (a failing tensor's producer, plus any nodes only side B has
// between it and tensors side A provides) alone on side B's runtime, fed with side A's exact
// tensors: a failure there means the error is introduced there. Stage 2, when no candidate
// fails on its own, isolates the failure's ancestors and names the one with the largest local
// error: an error below tolerance where it is made and amplified downstream (e.g. a float16
// round trip before a convolution).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <map>
#include <set>
#include <unordered_map>

#include "engine/fetch_groups.h"
#include "engine/index_ties.h"
#include "localize/growth.h"
#include "localize/pass_through.h"
#include "localize/repro.h"
#include "onnxprobe/format.h"
#include "onnxprobe/graph.h"
#include "onnxprobe/localize.h"

namespace onnxprobe {
namespace {

struct Plan {
  std::string name_b;
  std::vector<int> nodes;                 // topo indices in the graph of B
  std::vector<std::string> boundary;      // tensors fed from side A (B names)
  std::vector<std::string> graph_inputs;  // tensors fed from the shared inputs
  std::string error;
};

struct Ctx {
  Side& a;
  Side& b;
  const Model& g;
  const CompareJob& job;
  const ComparisonResult& r;
  LocalizeResult* out;
  std::unordered_map<std::string, std::string> b_to_a;
  std::set<std::string> a_names;
  // B's tensors its optimized graph fuses away: fed from A they split the fused region, which
  // must run whole to reproduce what B computes (MakePlan's through_fused; B names)
  std::set<std::string> hidden_b;
  std::unordered_map<std::string, const Tensor*> shared;
  std::unordered_map<std::string, Tensor> from_a;  // side A tensors fetched so far (A names)
  // side A is a PyTorch capture: every isolated node differs by framework rounding, so a
  // sub-tolerance source must stand out from its neighbours' noise (StandOutLevel)
  bool framework_noise = false;

  std::string AName(const std::string& b_name) const {
    auto m = b_to_a.find(b_name);
    return m == b_to_a.end() ? b_name : m->second;
  }
};

// The node producing `name_b` plus the nodes it needs that side A cannot provide (nodes only in
// B), and any node in `expand` (the path from a culprit to the failure, for repros).
Plan MakePlan(const Ctx& cx, const std::string& name_b, size_t max_nodes,
              const std::set<int>& expand = {}, bool through_fused = false) {
  Plan p;
  p.name_b = name_b;
  const GraphIndex& idx = cx.g.index();
  const TensorEntry* t = idx.Find(name_b);
  if (t == nullptr || t->producer < 0) {
    p.error = "the model of side B has no node producing '" + name_b + "'";
    return p;
  }
  if (!cx.a_names.count(cx.AName(name_b))) {  // e.g. a pairing set aside after comparing
    p.error = "side A has no tensor paired with '" + name_b + "'";
    return p;
  }
  std::set<int> nodes{t->producer};
  std::deque<int> queue{t->producer};
  std::set<std::string> boundary, graph_inputs;
  while (!queue.empty()) {
    const NodeInfo& n = idx.nodes()[queue.front()];
    queue.pop_front();
    std::vector<std::string> reads = n.inputs;
    reads.insert(reads.end(), n.implicit_inputs.begin(), n.implicit_inputs.end());
    for (const auto& x : reads) {
      if (x.empty()) continue;
      const TensorEntry* e = idx.Find(x);
      if (e == nullptr || e->kind == TensorKind::kInitializer) continue;
      if (e->kind == TensorKind::kGraphInput) {
        graph_inputs.insert(x);
        continue;
      }
      bool fused = through_fused && cx.hidden_b.count(x);
      if (cx.a_names.count(cx.AName(x)) && !fused && !expand.count(e->producer)) {
        boundary.insert(x);
      } else if (e->producer >= 0 && !nodes.count(e->producer)) {
        if (nodes.size() >= max_nodes) {
          p.error = "more than " + std::to_string(max_nodes) + " nodes between '" + name_b +
                    "' and tensors side A provides";
          return p;
        }
        nodes.insert(e->producer);
        queue.push_back(e->producer);
      }
    }
  }
  p.nodes.assign(nodes.begin(), nodes.end());
  p.boundary.assign(boundary.begin(), boundary.end());
  p.graph_inputs.assign(graph_inputs.begin(), graph_inputs.end());
  return p;
}

// Fetches from side A, in one run, every tensor the plans need that is not fetched yet.
Status FetchFor(Ctx& cx, const std::vector<Plan>& plans) {
  std::set<std::string> want;
  for (const Plan& p : plans) {
    if (!p.error.empty()) continue;
    want.insert(cx.AName(p.name_b));
    for (const auto& x : p.boundary) want.insert(cx.AName(x));
  }
  std::vector<std::string> names;
  for (const auto& n : want) {
    if (!cx.from_a.count(n)) names.push_back(n);
  }
  if (names.empty()) return Status::Ok();
  OP_ASSIGN_OR_RETURN(auto got, cx.a.Fetch(names));
  for (auto& o : got) cx.from_a[o.name] = std::move(o.tensor);
  return Status::Ok();
}

// The side-A tensors each plan reads, for GroupByBudget (fetch_groups.h).
std::vector<std::set<std::string>> NeedsOf(const Ctx& cx, const std::vector<Plan>& plans) {
  std::vector<std::set<std::string>> needs(plans.size());
  for (size_t k = 0; k < plans.size(); ++k) {
    if (!plans[k].error.empty()) continue;
    needs[k].insert(cx.AName(plans[k].name_b));
    for (const auto& x : plans[k].boundary) needs[k].insert(cx.AName(x));
  }
  return needs;
}

struct Run {
  std::string bytes;
  std::vector<std::pair<std::string, const Tensor*>> feed;
  const Tensor* expected = nullptr;
  Tensor observed;
  std::string error;
};

// Builds the plan's model and runs it on side B's runtime with side A's tensors.
Run Execute(Ctx& cx, const Plan& p, const std::set<int>& drop = {},
            const std::vector<std::pair<std::string, std::string>>& aliases = {}) {
  Run run;
  SubgraphSpec spec;
  for (int k : p.nodes) {
    if (!drop.count(k)) spec.nodes.push_back(k);
  }
  spec.aliases = aliases;
  auto feed = [&](const std::string& x, const Tensor* t) {
    spec.inputs.push_back(x);
    spec.input_types.emplace_back(t->dtype(), t->shape());
    run.feed.emplace_back(x, t);
  };
  for (const auto& x : p.boundary) {
    auto it = cx.from_a.find(cx.AName(x));
    if (it == cx.from_a.end() || it->second.empty()) {
      run.error = "side A did not provide '" + x + "'";
      return run;
    }
    feed(x, &it->second);
  }
  for (const auto& x : p.graph_inputs) {
    auto it = cx.shared.find(x);
    if (it == cx.shared.end()) {
      run.error = "graph input '" + x + "' is not among the shared inputs";
      return run;
    }
    feed(x, it->second);
  }
  auto e = cx.from_a.find(cx.AName(p.name_b));
  if (e == cx.from_a.end() || e->second.empty()) {
    run.error = "side A did not provide '" + p.name_b + "'";
    return run;
  }
  run.expected = &e->second;
  spec.outputs = {p.name_b};
  spec.output_types = {{e->second.dtype(), e->second.shape()}};
  auto bytes = ExtractSubgraph(cx.g, spec);
  if (!bytes.ok()) {
    run.error = bytes.status().message();
    return run;
  }
  run.bytes = std::move(*bytes);
  auto got = cx.b.RunOther(run.bytes, cx.g.dir(), run.feed, spec.outputs);
  ++cx.out->isolation_runs;
  if (!got.ok()) {
    run.error = got.status().message();
    return run;
  }
  run.observed = std::move((*got)[0].tensor);
  // indices that differ only where the values they pick tie (fed from A) are no error
  const TensorEntry* out = cx.g.index().Find(p.name_b);
  if (out != nullptr && out->producer >= 0) {
    const NodeInfo& n = cx.g.index().nodes()[out->producer];
    for (const auto& [name, t] : run.feed) {
      uint64_t differing = 0;
      if (IsIndexOutput(n, p.name_b) && name == n.inputs[0] &&
          OnlyIndexTies(cx.g, n, *run.expected, run.observed, *t, cx.job.policy.global, &differing))
        run.observed = *run.expected;
    }
  }
  return run;
}

// Largest error over the reference's magnitude: rounding noise is near float32's epsilon times
// the depth of the computation, a float16 round trip near 2^-12.
double ScaleNormalized(const TensorMetrics& m) {
  // the scale the tolerance used (mask fills such as finfo.min excluded)
  double scale =
      m.scale > 0 ? m.scale : std::max(std::fabs(m.stats_a.min), std::fabs(m.stats_a.max));
  return m.max_abs / std::max(scale, 1e-30);
}

constexpr double kStandOut = 8;         // times the median isolated error of the nodes examined
constexpr double kNoiseCeiling = 1e-5;  // normalized float32 rounding of one module stays below

// For a PyTorch side, the scale-normalized error a source must reach to stand out from framework
// rounding among `culprits` (the nodes examined together): kNoiseCeiling and, when three or
// more were examined, kStandOut times their median; 0 on other sides.
double StandOutLevel(const Ctx& cx, const std::vector<Culprit>& culprits) {
  if (!cx.framework_noise) return 0;
  if (culprits.size() < 3) return kNoiseCeiling;
  std::vector<double> e;
  for (const auto& c : culprits) e.push_back(ScaleNormalized(c.metrics));
  std::nth_element(e.begin(), e.begin() + e.size() / 2, e.end());
  return std::max(kNoiseCeiling, kStandOut * e[e.size() / 2]);
}

std::string NodeName(const NodeInfo& n, int k) {
  return n.name.empty() ? n.op_type + "#" + std::to_string(k) : n.name;
}

// A culprit record for a plan, with the nodes only in B named.
Culprit Describe(const Ctx& cx, const Plan& p, int row) {
  Culprit c;
  c.row = row;
  c.tensor = cx.AName(p.name_b);
  const GraphIndex& idx = cx.g.index();
  const TensorEntry* t = idx.Find(p.name_b);
  if (t != nullptr && t->producer >= 0) {
    c.node = NodeName(idx.nodes()[t->producer], t->producer);
    c.op_type = idx.nodes()[t->producer].op_type;
  }
  c.error = p.error;
  for (int k : p.nodes) {
    const NodeInfo& n = idx.nodes()[k];
    c.nodes.push_back(NodeName(n, k));
    bool in_a = false;
    for (const auto& o : n.outputs) in_a = in_a || (!o.empty() && cx.a_names.count(cx.AName(o)));
    if (!in_a) c.nodes_only_in_b.push_back(c.nodes.back());
  }
  return c;
}

// For a consumer reading `x` through a chain of nodes only in B (e.g. an inserted Cast pair),
// the side A tensor at the start of that chain: single-input steps back to a boundary tensor.
std::string ChainStart(const Model& g, const std::string& x, const std::set<std::string>& boundary,
                       const std::set<int>& b_only) {
  const GraphIndex& idx = g.index();
  std::string cur = x;
  for (int steps = 0; steps < 16; ++steps) {
    if (boundary.count(cur)) return cur;
    const TensorEntry* e = idx.Find(cur);
    if (e == nullptr || e->producer < 0 || !b_only.count(e->producer)) return "";
    std::string next;
    int activations = 0;
    for (const auto& in : idx.nodes()[e->producer].inputs) {
      const TensorEntry* ie = idx.Find(in);
      if (in.empty() || ie == nullptr || ie->kind == TensorKind::kInitializer) continue;
      next = in;
      ++activations;
    }
    if (activations != 1) return "";
    cur = next;
  }
  return "";
}

// When a plan holds nodes only in B, checks whether the candidate's node alone (fed side A's
// tensor where B reads their output) matches; if so the nodes only in B are named as culprit.
void Bypass(Ctx& cx, const Plan& p, const Tolerance& tol, Culprit* c) {
  if (c->nodes_only_in_b.empty()) return;
  const GraphIndex& idx = cx.g.index();
  const TensorEntry* te = idx.Find(p.name_b);
  const NodeInfo& node = idx.nodes()[te->producer];
  std::set<std::string> boundary(p.boundary.begin(), p.boundary.end());
  std::set<int> b_only(p.nodes.begin(), p.nodes.end());
  b_only.erase(te->producer);
  SubgraphSpec alone;
  alone.nodes = {te->producer};
  std::vector<std::pair<std::string, const Tensor*>> feed;
  for (const auto& x : node.inputs) {
    if (x.empty() || std::find(alone.inputs.begin(), alone.inputs.end(), x) != alone.inputs.end())
      continue;
    const TensorEntry* xe = idx.Find(x);
    if (xe == nullptr || xe->kind == TensorKind::kInitializer) continue;
    const Tensor* t = nullptr;
    if (xe->kind == TensorKind::kGraphInput) {
      auto it = cx.shared.find(x);
      t = it == cx.shared.end() ? nullptr : it->second;
    } else {
      std::string src = ChainStart(cx.g, x, boundary, b_only);
      auto it = src.empty() ? cx.from_a.end() : cx.from_a.find(cx.AName(src));
      t = it == cx.from_a.end() ? nullptr : &it->second;
    }
    if (t == nullptr) return;
    alone.inputs.push_back(x);
    alone.input_types.emplace_back(t->dtype(), t->shape());
    feed.emplace_back(x, t);
  }
  const Tensor& expected = cx.from_a.at(cx.AName(p.name_b));
  alone.outputs = {p.name_b};
  alone.output_types = {{expected.dtype(), expected.shape()}};
  auto bytes = ExtractSubgraph(cx.g, alone);
  if (!bytes.ok()) return;
  auto got = cx.b.RunOther(*bytes, cx.g.dir(), feed, alone.outputs);
  ++cx.out->isolation_runs;
  if (!got.ok()) return;
  TensorResult alone_row;
  alone_row.tolerance = tol;
  JudgeRow(expected, (*got)[0].tensor, cx.job.policy, cx.job.kernel, &alone_row);
  const TensorMetrics& m = alone_row.metrics;
  bool same = m.max_abs == 0 || (c->introduced && alone_row.within_tolerance);
  if (!same || m.max_abs >= c->metrics.max_abs) return;
  for (int k : p.nodes) {
    if (!b_only.count(k)) continue;
    c->reason = "nodes only in B (" + NodeName(idx.nodes()[k], k) +
                ", ...) make the difference: " + NodeName(node, te->producer) +
                " alone matches the reference; " + c->reason;
    c->node = NodeName(idx.nodes()[k], k);
    c->op_type = idx.nodes()[k].op_type;
    return;
  }
}

// A pair of Cast nodes in a plan, the first read only by the second (float32 -> float16 ->
// float32 and the like): `from` is what the first reads, `to` what the second makes.
struct RoundTrip {
  int first = -1, second = -1;
  std::string from, to;
};

std::vector<RoundTrip> RoundTrips(const Ctx& cx, const Plan& p) {
  const GraphIndex& idx = cx.g.index();
  std::set<int> in_plan(p.nodes.begin(), p.nodes.end());
  std::vector<RoundTrip> out;
  for (int k : p.nodes) {
    const NodeInfo& n = idx.nodes()[k];
    if (n.op_type != "Cast" || n.inputs.empty() || n.outputs.empty()) continue;
    const TensorEntry* e = idx.Find(n.outputs[0]);
    if (e == nullptr || e->consumers.size() != 1 || !in_plan.count(e->consumers[0])) continue;
    const NodeInfo& m = idx.nodes()[e->consumers[0]];
    if (m.op_type != "Cast" || m.outputs.empty() || n.outputs[0] == p.name_b) continue;
    out.push_back({k, e->consumers[0], n.inputs[0], m.outputs[0]});
  }
  return out;
}

// When a plan holds a Cast round trip, runs it again without each one (the second Cast's output
// made from the first one's input): if that removes the error (within tolerance where the plan
// failed it (`failed`), or at most a tenth of it), the round trip's first Cast is the culprit. The
// runtime rejects a bypass whose types do not line up (a round trip through another type is no
// round trip), and nothing is concluded then. Returns whether a round trip was named.
bool BypassRoundTrips(Ctx& cx, const Plan& p, const Tolerance& tol, bool failed, Culprit* c) {
  const GraphIndex& idx = cx.g.index();
  for (const RoundTrip& rt : RoundTrips(cx, p)) {
    Run run = Execute(cx, p, {rt.first, rt.second}, {{rt.from, rt.to}});
    if (!run.error.empty()) continue;
    TensorResult row;
    row.tolerance = tol;
    JudgeRow(*run.expected, run.observed, cx.job.policy, cx.job.kernel, &row);
    bool cleared =
        (failed && row.within_tolerance) || row.metrics.max_abs <= 0.1 * c->metrics.max_abs;
    if (!cleared) continue;
    const NodeInfo& first = idx.nodes()[rt.first];
    c->reason = "the Cast round trip " + NodeName(first, rt.first) + " -> " +
                NodeName(idx.nodes()[rt.second], rt.second) +
                " makes the difference: without it the output's max abs error is " +
                FormatNumber(row.metrics.max_abs) + " instead of " +
                FormatNumber(c->metrics.max_abs) + (c->reason.empty() ? "" : "; " + c->reason);
    c->node = NodeName(first, rt.first);
    c->op_type = first.op_type;
    return true;
  }
  return false;
}

// On a PyTorch side a plan can span a module call exported as several nodes (Hardswish as
// HardSigmoid and Mul, GroupNorm as InstanceNormalization, Mul and Add): when the plan's own
// output node only passes on one input (PassThroughSource), the node making that input is named.
// Runs nothing; leaves a culprit that Bypass or BypassRoundTrips renamed alone.
void NarrowToSource(const Ctx& cx, const Plan& p, Culprit* c) {
  if (!cx.framework_noise || p.nodes.size() < 2) return;
  const GraphIndex& idx = cx.g.index();
  const TensorEntry* t = idx.Find(p.name_b);
  if (t == nullptr || t->producer < 0 || c->node != NodeName(idx.nodes()[t->producer], t->producer))
    return;
  std::set<std::string> fed(p.boundary.begin(), p.boundary.end());
  fed.insert(p.graph_inputs.begin(), p.graph_inputs.end());
  int k = PassThroughSource(idx, p.nodes, fed, p.name_b);
  if (k < 0) return;
  const NodeInfo& n = idx.nodes()[k];
  std::string reason = c->node + " only passes on what " + NodeName(n, k) +
                       " makes (its other operands are fixed values)";
  c->reason = reason + (c->reason.empty() ? "" : "; " + c->reason);
  c->node = NodeName(n, k);
  c->op_type = n.op_type;
}

void MaybeWriteRepro(Ctx& cx, const LocalizeOptions& o, const Plan& p, const Run& run,
                     const Culprit& c) {
  if (o.repro_dir.empty() || !cx.out->repro_dir.empty()) return;
  ReproBundle bundle{run.bytes, run.feed, {{p.name_b, run.expected}}, {{p.name_b, &run.observed}}};
  Status st = WriteReproBundle(o.repro_dir, bundle, c, cx.b, cx.r);
  if (st.ok())
    cx.out->repro_dir = o.repro_dir;
  else
    cx.out->note = "repro bundle not written: " + st.message();
}

// Stage 2: the ancestors of the first failure that side A also has, isolated one by one.
void Upstream(Ctx& cx, const LocalizeOptions& o, int fail_row) {
  const TensorResult& fail = cx.r.rows[fail_row];
  const GraphIndex& idx = cx.g.index();
  const TensorEntry* t = idx.Find(fail.name_b);
  if (t == nullptr || t->producer < 0) return;
  // nearest ancestors first, up to 48 nodes
  std::vector<int> order;
  std::set<int> seen{t->producer};
  std::deque<int> queue{t->producer};
  while (!queue.empty() && order.size() < 48) {
    int k = queue.front();
    queue.pop_front();
    if (k != t->producer) order.push_back(k);
    for (const auto& x : idx.nodes()[k].inputs) {
      const TensorEntry* e = idx.Find(x);
      if (e != nullptr && e->producer >= 0 && seen.insert(e->producer).second)
        queue.push_back(e->producer);
    }
  }
  std::vector<Plan> plans;
  for (int k : order) {
    for (const auto& out : idx.nodes()[k].outputs) {
      if (!out.empty() && cx.a_names.count(cx.AName(out)))
        plans.push_back(MakePlan(cx, out, o.max_subgraph_nodes));
    }
  }
  if (plans.empty() || !FetchFor(cx, plans).ok()) return;
  double best = 0;
  int best_i = -1;
  std::vector<Culprit> found;
  for (size_t i = 0; i < plans.size(); ++i) {
    if (!plans[i].error.empty()) continue;
    Run run = Execute(cx, plans[i]);
    if (!run.error.empty()) continue;
    Culprit c = Describe(cx, plans[i], -1);
    TensorResult iso;
    iso.tolerance = cx.job.policy.For(c.tensor, c.op_type);
    JudgeRow(*run.expected, run.observed, cx.job.policy, cx.job.kernel, &iso);
    c.metrics = iso.metrics;
    c.isolated = true;
    if (c.metrics.max_rel > best) {
      best = c.metrics.max_rel;
      best_i = static_cast<int>(found.size());
    }
    found.push_back(std::move(c));
  }
  auto plan_of = [&](const Culprit& c) {
    const Plan* plan = nullptr;
    for (const auto& p : plans) {
      if (cx.AName(p.name_b) == c.tensor) plan = &p;
    }
    return plan;
  };
  // float32 rounding differences stay near 1e-7; below 1e-5 nothing stands out as a source
  bool stands_out = best_i >= 0 && best >= 1e-5 &&
                    ScaleNormalized(found[best_i].metrics) >= StandOutLevel(cx, found);
  if (!stands_out) {
    // ... except a float16 round trip, whose error can stay within the noise where it sits and
    // grow downstream: taken when bypassing it removes the ancestor's error (as Drift does)
    best_i = -1;
    for (size_t i = 0; i < found.size() && best_i < 0; ++i) {
      const Plan* plan = plan_of(found[i]);
      if (plan == nullptr || RoundTrips(cx, *plan).empty()) continue;
      Culprit probe = found[i];
      Tolerance tol = cx.job.policy.For(probe.tensor, probe.op_type);
      if (BypassRoundTrips(cx, *plan, tol, false, &probe)) best_i = static_cast<int>(i);
    }
    if (best_i < 0) return;
  }
  Culprit c = found[best_i];
  const Plan* plan = plan_of(c);
  c.introduced = true;
  c.accumulated_max_rel = fail.metrics.max_rel;
  c.reason = (stands_out ? "largest error any ancestor of " + fail.name + " makes on its own"
                         : "error an ancestor of " + fail.name + " makes on its own") +
             " (max rel " + FormatNumber(c.metrics.max_rel) +
             "), below tolerance here and amplified downstream";
  Tolerance tol = cx.job.policy.For(c.tensor, c.op_type);
  if (!BypassRoundTrips(cx, *plan, tol, false, &c)) {
    Bypass(cx, *plan, tol, &c);
    NarrowToSource(cx, *plan, &c);
  }
  if (!o.repro_dir.empty()) {
    // the repro must fail on its own: run from the culprit's inputs down to the failure
    std::set<int> from(plan->nodes.begin(), plan->nodes.end()), path;
    std::set<int> anc{t->producer};
    std::deque<int> q{t->producer};
    while (!q.empty()) {
      int k = q.front();
      q.pop_front();
      for (const auto& x : idx.nodes()[k].inputs) {
        const TensorEntry* e = idx.Find(x);
        if (e != nullptr && e->producer >= 0 && anc.insert(e->producer).second)
          q.push_back(e->producer);
      }
    }
    for (int k : anc) {
      if (k >= *from.begin()) path.insert(k);  // topological order: only nodes after the culprit's
    }
    Plan rp = MakePlan(cx, fail.name_b, 256, path);
    if (rp.error.empty() && FetchFor(cx, {rp}).ok()) {
      Run run = Execute(cx, rp);
      TensorResult check;
      check.tolerance = fail.tolerance;
      if (run.error.empty()) {
        JudgeRow(*run.expected, run.observed, cx.job.policy, cx.job.kernel, &check);
        if (!check.within_tolerance) MaybeWriteRepro(cx, o, rp, run, c);
      }
    }
  }
  cx.out->culprits.insert(cx.out->culprits.begin(), std::move(c));
}

constexpr double kMinGrowthDb = 1.0;  // error relative to signal grows by >= 12%

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

// Where differences of any size are born: rows whose inputs are bit-exact introduce theirs by
// construction; others are run alone with A's inputs and compared bitwise.
void Drift(Ctx& cx, const LocalizeOptions& o, const std::vector<RowGrowth>& growth) {
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
    found.push_back(std::move(c));
  }
  // a plan fed inside a region side B fuses runs unfused and matches A bit for bit: such plans
  // get a second one through the fused region (`whole`), run when the first shows nothing
  std::vector<Plan> all, whole;
  std::set<int> regions;  // rows named by a plan through a fused region
  for (int i : others) {
    all.push_back(MakePlan(cx, cx.r.rows[i].name_b, o.max_subgraph_nodes));
    const Plan& p = all.back();
    bool crosses = p.error.empty() &&
                   std::any_of(p.boundary.begin(), p.boundary.end(),
                               [&](const std::string& x) { return cx.hidden_b.count(x) > 0; });
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
      c.reason = plans[k].nodes.size() == 1
                     ? "differs when run alone with A's exact inputs"
                     : "differs when its " + std::to_string(plans[k].nodes.size()) +
                           " nodes run together with A's exact inputs";
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
  std::stable_sort(found.begin(), found.end(),
                   [](const Culprit& x, const Culprit& y) { return x.row < y.row; });
  // several rows can pair with one tensor (a module and its container): one origin per node
  std::set<std::string> named;
  found.erase(std::remove_if(found.begin(), found.end(),
                             [&](const Culprit& f) { return !named.insert(f.node).second; }),
              found.end());
}

}  // namespace

Expected<LocalizeResult> Localize(Side& a, Side& b, const std::vector<NamedTensor>& inputs,
                                  const CompareJob& job, const LocalizeOptions& options,
                                  const ComparisonResult& r) {
  auto t0 = std::chrono::steady_clock::now();
  LocalizeResult out;
  out.ran = true;
  auto finish = [&]() {
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return out;
  };
  const Model* g = b.model();
  if (g == nullptr) {
    out.note = "side B is a dump: isolation needs side B's model and runtime";
    return finish();
  }
  Ctx cx{a, b, *g, job, r, &out, {}, {}, {}, {}, {}};
  cx.hidden_b.insert(b.hidden().begin(), b.hidden().end());
  cx.framework_noise = a.info().kind == SideKind::kTorchCapture;
  for (const auto& [x, y] : job.rename) cx.b_to_a[y] = x;
  for (const auto& t : a.tensors()) cx.a_names.insert(t.name);
  for (const auto& nt : inputs) cx.shared[nt.name] = &nt.tensor;

  std::vector<RowGrowth> growth = ErrorGrowth(*g, r);
  if (r.failures == 0 && options.candidates != Candidates::kAll) {
    if (options.drift && r.first_difference >= 0) Drift(cx, options, growth);
    return finish();
  }
  std::vector<int> rows, inherited;
  std::set<std::string> planned;  // several rows can pair with one tensor (containers)
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const TensorResult& t = r.rows[i];
    if (planned.count(t.name_b) || t.state != RowState::kCompared) continue;
    bool take = options.candidates == Candidates::kAll ||
                (options.candidates == Candidates::kFailing && !t.pass) ||
                (options.candidates == Candidates::kFrontier && t.role == Role::kIntroduced);
    if (take) {
      rows.push_back(static_cast<int>(i));
      planned.insert(t.name_b);
    } else if (!t.pass && growth[i].growth_db >= kMinGrowthDb) {
      inherited.push_back(static_cast<int>(i));
    }
  }
  // every introduced error, not only the first: inherited-looking rows whose error grows most
  for (int i : ByGrowth(inherited, growth, options.max_growth_candidates, nullptr)) {
    if (planned.insert(r.rows[i].name_b).second) rows.push_back(i);
  }
  std::sort(rows.begin(), rows.end());
  if (rows.empty()) {
    out.note = r.failures > 0 ? "no failing row can be isolated (none was compared on its own)"
                              : "no candidate to isolate";
    if (options.drift && r.first_difference >= 0) Drift(cx, options, growth);
    return finish();
  }
  std::vector<Plan> plans;
  for (int i : rows) plans.push_back(MakePlan(cx, r.rows[i].name_b, options.max_subgraph_nodes));
  Status fetched = FetchFor(cx, plans);
  if (!fetched.ok()) {
    out.note = "side A could not provide the candidates' inputs: " + fetched.message();
    if (options.drift && r.first_difference >= 0) Drift(cx, options, growth);
    return finish();
  }
  bool any_introduced = false;
  for (size_t i = 0; i < plans.size(); ++i) {
    const TensorResult& row = r.rows[rows[i]];
    Culprit c = Describe(cx, plans[i], rows[i]);
    c.accumulated_max_rel = row.metrics.max_rel;
    if (c.error.empty()) {
      Run run = Execute(cx, plans[i]);
      c.error = run.error;
      if (run.error.empty()) {
        TensorResult iso;
        iso.tolerance = row.tolerance;
        JudgeRow(*run.expected, run.observed, job.policy, job.kernel, &iso);
        c.metrics = iso.metrics;
        c.reason = iso.reason;
        c.isolated = true;
        c.introduced = !iso.within_tolerance;
        if (c.introduced) {
          if (!BypassRoundTrips(cx, plans[i], row.tolerance, true, &c)) {
            Bypass(cx, plans[i], row.tolerance, &c);
            NarrowToSource(cx, plans[i], &c);
          }
          MaybeWriteRepro(cx, options, plans[i], run, c);
        }
      }
    }
    if (c.isolated && !row.pass)
      out.settled.emplace_back(rows[i], c.introduced ? Role::kIntroduced : Role::kInherited);
    any_introduced = any_introduced || c.introduced;
    // a row picked for its error growth is listed only when it does introduce error
    if (row.role == Role::kIntroduced || c.introduced ||
        options.candidates != Candidates::kFrontier)
      out.culprits.push_back(std::move(c));
  }
  // introduced first; among those, a culprit whose isolated nodes hold another introduced
  // culprit's node after it (the other one explains its error: e.g. a TopK with no PyTorch value
  // run inside the Gather that reads its indices); then by isolated error; failures to isolate
  // last
  std::map<const Culprit*, int> holds;
  for (const Culprit& y : out.culprits) {
    for (const Culprit& x : out.culprits) {
      if (&x == &y || !x.introduced || !y.introduced || x.node == y.node) continue;
      if (std::find(y.nodes.begin(), y.nodes.end(), x.node) != y.nodes.end()) ++holds[&y];
    }
  }
  std::vector<std::pair<int, Culprit>> keyed;
  for (Culprit& c : out.culprits) keyed.emplace_back(holds[&c], std::move(c));
  std::stable_sort(keyed.begin(), keyed.end(), [](const auto& kx, const auto& ky) {
    const Culprit &x = kx.second, &y = ky.second;
    if (x.introduced != y.introduced) return x.introduced;
    if (x.isolated != y.isolated) return x.isolated;
    if (kx.first != ky.first) return kx.first < ky.first;
    return x.metrics.max_rel > y.metrics.max_rel;
  });
  out.culprits.clear();
  for (auto& k : keyed) out.culprits.push_back(std::move(k.second));
  if (!any_introduced && r.first_failure >= 0) Upstream(cx, options, r.first_failure);
  if (options.drift && r.first_difference >= 0) Drift(cx, options, growth);
  if (!options.repro_dir.empty() && out.repro_dir.empty() && out.note.empty()) {
    out.note = "no isolated node reproduces the error: no repro bundle written";
  }
  return finish();
}

void ApplyRoles(const LocalizeResult& l, ComparisonResult* r) {
  for (const auto& [row, role] : l.settled) {
    if (row >= 0 && row < static_cast<int>(r->rows.size())) r->rows[row].role = role;
  }
  r->frontier.clear();
  for (size_t i = 0; i < r->rows.size(); ++i) {
    if (r->rows[i].role == Role::kIntroduced) r->frontier.push_back(static_cast<int>(i));
  }
}

}  // namespace onnxprobe
