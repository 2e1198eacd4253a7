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
#include <deque>
#include <map>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "localize/growth.h"
#include "localize/isolation.h"
#include "localize/repro.h"
#include "onnxprobe/common/format.h"
#include "onnxprobe/localize/localize.h"
#include "onnxprobe/side/fetch_groups.h"

namespace onnxprobe {
namespace {

using isolation::Bypass;
using isolation::BypassRoundTrips;
using isolation::CrossesFusion;
using isolation::Ctx;
using isolation::Describe;
using isolation::Drift;
using isolation::Execute;
using isolation::FetchFor;
using isolation::FitConstants;
using isolation::MakePlan;
using isolation::NameFusion;
using isolation::NameStaticReader;
using isolation::NarrowToSource;
using isolation::NeedsOf;
using isolation::Plan;
using isolation::RoundTrips;
using isolation::Run;
using isolation::ScaleNormalized;
using isolation::StandOutLevel;

void MaybeWriteRepro(Ctx& cx, const LocalizeOptions& o, const Plan& p, const Run& run,
                     const Culprit& c) {
  if (o.repro_dir.empty() || !cx.out->repro_dir.empty()) return;
  ReproBundle bundle{
      run.bytes, cx.g.dir(), run.feed, {{p.name_b, run.expected}}, {{p.name_b, &run.observed}}};
  Status st = WriteReproBundle(o.repro_dir, bundle, c, cx.b, cx.r);
  cx.out->repro_status = st;
  if (st.ok())
    cx.out->repro_dir = o.repro_dir;
  else
    cx.out->note = "repro bundle not written: " + st.message();
}

void KeepCase(Ctx& cx, const LocalizeOptions& o, const Plan& p, const Run& run, const Culprit& c) {
  if (cx.out->cases.size() >= o.keep_cases || run.expected == nullptr) return;
  // the copies live until the report is made: under a memory budget, a quarter of it at most
  uint64_t bytes = run.expected->byte_size() + run.observed.byte_size();
  for (const auto& [name, t] : run.feed) bytes += t->byte_size();
  if (cx.job.max_memory > 0 && bytes > cx.job.max_memory / 4) return;
  IsolatedCase k{c.node, c.tensor, run.bytes,     cx.g.dir(),
                 {},     p.name_b, *run.expected, run.observed};
  for (const auto& [name, t] : run.feed) k.inputs.push_back({name, *t});
  cx.out->cases.push_back(std::move(k));
}

// Fed a tensor side B's optimizer fuses away, a plan runs unfused and shows nothing: the region
// is run whole (from tensors side A has outside it). Replaces `plan`, `run` and `iso` when the
// whole region fails alone; whether it did.
bool RetryThroughFusion(Ctx& cx, const LocalizeOptions& o, Plan* plan, Run* run,
                        TensorResult* iso) {
  if (iso->within_tolerance == false || !CrossesFusion(cx, *plan)) return false;
  Plan whole = MakePlan(cx, plan->name_b, o.max_subgraph_nodes, {}, true);
  if (!whole.error.empty() || !FetchFor(cx, {whole}).ok()) return false;
  Run w = Execute(cx, whole);
  if (!w.error.empty()) return false;
  TensorResult wi;
  wi.tolerance = iso->tolerance;
  JudgeRow(*w.expected, w.observed, cx.job.policy, cx.job.kernel, &wi);
  if (wi.within_tolerance) return false;
  *plan = std::move(whole);
  *run = std::move(w);
  *iso = std::move(wi);
  return true;
}

// Node `k` and every node upstream of it (topological indices).
std::set<int> AndAncestors(const GraphIndex& idx, int k) {
  std::set<int> out{k};
  std::deque<int> q{k};
  while (!q.empty()) {
    int n = q.front();
    q.pop_front();
    for (const auto& x : idx.nodes()[n].inputs) {
      const TensorEntry* e = x.empty() ? nullptr : idx.Find(x);
      if (e != nullptr && e->producer >= 0 && out.insert(e->producer).second)
        q.push_back(e->producer);
    }
  }
  return out;
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
    NameStaticReader(cx, &c);
  }
  if (!o.repro_dir.empty()) {
    // the repro must fail on its own: run from the culprit's inputs down to the failure
    std::set<int> from(plan->nodes.begin(), plan->nodes.end()), path;
    for (int k : AndAncestors(idx, t->producer)) {
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
  if (cx.out->cases.size() < o.keep_cases) {  // the source's own run, for diagnosis
    Run run = Execute(cx, *plan);
    if (run.error.empty()) KeepCase(cx, o, *plan, run, c);
  }
  cx.out->culprits.insert(cx.out->culprits.begin(), std::move(c));
}

// A failure no node makes alone, and no ancestor Upstream reached: a Cast round trip among the
// drift origins whose removal removes the difference it makes, upstream of the first failure, is
// where the error is born (a float16 round trip far before the tensor its rounding first pushes
// beyond tolerance; under the exact reference its own rows pass as float16 arithmetic).
void NameRemovableOrigin(Ctx& cx, const std::set<std::string>& removable) {
  auto& culprits = cx.out->culprits;
  if (removable.empty() ||
      std::any_of(culprits.begin(), culprits.end(), [](const Culprit& c) { return c.introduced; }))
    return;
  const GraphIndex& idx = cx.g.index();
  const TensorEntry* t = idx.Find(cx.r.rows[cx.r.first_failure].name_b);
  if (t == nullptr || t->producer < 0) return;
  std::set<std::string> above;  // names of the first failure's ancestors
  for (int k : AndAncestors(idx, t->producer)) above.insert(isolation::NodeName(idx.nodes()[k], k));
  for (const Culprit& d : cx.out->drift_origins) {
    if (!removable.count(d.node) || !above.count(d.node)) continue;
    Culprit c = d;
    c.row = -1;
    c.introduced = true;
    c.accumulated_max_rel = cx.r.rows[cx.r.first_failure].metrics.max_rel;
    c.reason = "removing this round trip removes the difference it makes (" + d.reason +
               "); below tolerance here and amplified downstream to " +
               cx.r.rows[cx.r.first_failure].name;
    culprits.insert(culprits.begin(), std::move(c));
    return;
  }
}

}  // namespace

Expected<LocalizeResult> Localize(Side& a, Side& b, const std::vector<NamedTensor>& inputs,
                                  const CompareJob& job, const LocalizeOptions& options,
                                  const ComparisonResult& r) {
  auto t0 = std::chrono::steady_clock::now();
  size_t runs_a0 = a.runs();
  LocalizeResult out;
  out.ran = true;
  auto finish = [&]() {
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    out.side_a_runs = a.runs() >= runs_a0 ? a.runs() - runs_a0 : 0;
    return out;
  };
  const Model* g = b.model();
  if (g == nullptr) {
    out.note = "side B is a dump: isolation needs side B's model and runtime";
    return finish();
  }
  Ctx cx{a, b, *g, job, r, &out, {}, {}, {}, {}, {}, {}, {}, false, 0};
  cx.hidden_b.insert(b.hidden().begin(), b.hidden().end());
  cx.framework_noise = a.info().kind == SideKind::kTorchCapture;
  cx.on_run = options.on_run;
  for (const auto& [x, y] : job.rename) cx.b_to_a[y] = x;
  // two models: B's tensor of an A name that pairs with another B tensor, or that a rewrite gave
  // another meaning (engine/rewrites.h), has no value on side A
  if (a.info().kind != SideKind::kTorchCapture) {
    for (const auto& [x, y] : job.rename) cx.b_to_a.emplace(x, "");
    for (const auto& [x, why] : job.distrusted) cx.b_to_a.emplace(x, "");
  }
  for (const auto& t : a.tensors()) cx.a_names.insert(t.name);
  for (const auto& nt : inputs) cx.shared[nt.name] = &nt.tensor;
  for (const auto& row : r.rows) {
    // advisory rows too: substitution may feed them, and a confirmed one is isolated
    if (row.state == RowState::kCompared || row.state == RowState::kAdvisory)
      cx.b_dtypes[row.name_b] = row.metrics.dtype_b;
  }

  isolation::Confirmation confirmation = isolation::ConfirmInside(cx);
  out.confirmed = std::move(confirmation.confirmed);
  out.explained = std::move(confirmation.explained);
  std::set<int> confirmed;
  for (const auto& [row, why] : out.confirmed) confirmed.insert(row);
  std::vector<RowGrowth> growth = ErrorGrowth(*g, r);
  if (r.failures == 0 && confirmed.empty() && options.candidates != Candidates::kAll) {
    if (options.drift && r.first_difference >= 0) Drift(cx, options, growth);
    return finish();
  }
  // every failing row is isolated (no growth gate: a second fault downstream of a first adds
  // little to the error it inherits and is still a fault), its inputs fetched from side A in
  // groups that fit the memory budget
  std::vector<int> rows;
  std::set<std::string> planned;  // several rows can pair with one tensor (containers)
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const TensorResult& t = r.rows[i];
    bool judged = t.state == RowState::kCompared || confirmed.count(static_cast<int>(i));
    if (planned.count(t.name_b) || !judged) continue;
    if (options.candidates == Candidates::kAll || !t.pass || confirmed.count(static_cast<int>(i))) {
      rows.push_back(static_cast<int>(i));
      planned.insert(t.name_b);
    }
  }
  if (rows.empty()) {
    out.note = r.failures > 0 ? "no failing row can be isolated (none was compared on its own)"
                              : "no candidate to isolate";
    if (options.drift && r.first_difference >= 0) Drift(cx, options, growth);
    return finish();
  }
  std::vector<Plan> plans;
  for (int i : rows) plans.push_back(MakePlan(cx, r.rows[i].name_b, options.max_subgraph_nodes));
  bool any_introduced = false;
  for (const auto& [begin, end] : GroupByBudget(NeedsOf(cx, plans), a.tensors(), job.max_memory)) {
    cx.from_a.clear();
    std::vector<Plan> group(plans.begin() + begin, plans.begin() + end);
    Status fetched = FetchFor(cx, group);
    if (!fetched.ok()) {
      out.note = "side A could not provide the candidates' inputs: " + fetched.message();
      break;
    }
    for (size_t i = begin; i < end; ++i) {
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
          bool fused = RetryThroughFusion(cx, options, &plans[i], &run, &iso);
          if (fused) {
            c = Describe(cx, plans[i], rows[i]);
            c.accumulated_max_rel = row.metrics.max_rel;
          }
          c.metrics = iso.metrics;
          c.reason = iso.reason;
          c.isolated = true;
          c.introduced = !iso.within_tolerance;
          if (c.introduced) {
            if (!BypassRoundTrips(cx, plans[i], row.tolerance, true, &c)) {
              Bypass(cx, plans[i], row.tolerance, &c);
              NarrowToSource(cx, plans[i], &c);
            }
            NameStaticReader(cx, &c);
            if (fused)
              NameFusion(cx, plans[i], &c);
            else
              FitConstants(cx, plans[i], row.tolerance, &c);
            MaybeWriteRepro(cx, options, plans[i], run, c);
            KeepCase(cx, options, plans[i], run, c);
          }
        }
      }
      bool failing = !row.pass || confirmed.count(rows[i]);
      if (c.isolated && failing)
        out.settled.emplace_back(rows[i], c.introduced ? Role::kIntroduced : Role::kInherited);
      any_introduced = any_introduced || c.introduced;
      // a row found to only inherit is listed only when asked for every candidate
      if (row.role == Role::kIntroduced || c.introduced ||
          options.candidates != Candidates::kFrontier)
        out.culprits.push_back(std::move(c));
    }
  }
  cx.from_a.clear();
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
  // a weight's static transform and the node computing with it name one node: listed once
  std::set<std::string> listed;
  for (auto& k : keyed) {
    if (k.second.introduced && !listed.insert(k.second.node).second) continue;
    out.culprits.push_back(std::move(k.second));
  }
  if (!any_introduced && r.first_failure >= 0) Upstream(cx, options, r.first_failure);
  std::set<std::string> removable;  // drift origins whose round trip makes the difference
  if (options.drift && r.first_difference >= 0) removable = Drift(cx, options, growth);
  if (r.first_failure >= 0) NameRemovableOrigin(cx, removable);
  if (!options.repro_dir.empty() && out.repro_dir.empty() && out.note.empty()) {
    out.note = "no isolated node reproduces the error: no repro bundle written";
  }
  return finish();
}

void ApplyRoles(const LocalizeResult& l, ComparisonResult* r) {
  for (const auto& [i, why] : l.confirmed) {
    if (i < 0 || i >= static_cast<int>(r->rows.size())) continue;
    TensorResult& row = r->rows[i];
    if (row.state != RowState::kAdvisory || row.within_tolerance) continue;
    row.state = RowState::kCompared;
    row.pass = false;
    const std::string unconfirmed = "differs, but the module call's outputs match";
    if (row.reason.compare(0, unconfirmed.size(), unconfirmed) == 0) {
      size_t open = row.reason.find(" (");
      if (open != std::string::npos && row.reason.back() == ')')
        row.reason = row.reason.substr(open + 2, row.reason.size() - open - 3);
    }
    row.reason = why + "; " + row.reason;
    ++r->failures;
    if (r->first_failure < 0 || i < r->first_failure) r->first_failure = i;
  }
  for (const auto& [i, why] : l.explained) {
    if (i >= 0 && i < static_cast<int>(r->rows.size()))
      r->rows[i].reason = r->rows[i].reason.empty() ? why : r->rows[i].reason + "; " + why;
  }
  // a role settled for a tensor holds for every row paired with it (a module and its containers)
  std::unordered_map<std::string, Role> settled;
  for (const auto& [row, role] : l.settled) {
    if (row >= 0 && row < static_cast<int>(r->rows.size())) settled[r->rows[row].name_b] = role;
  }
  std::unordered_set<std::string> first;
  for (auto& row : r->rows) {
    auto it = settled.find(row.name_b);
    if (it == settled.end() || row.pass) continue;
    bool container = !first.insert(row.name_b).second;
    row.role = container ? Role::kInherited : it->second;
  }
  r->frontier = FrontierOf(*r);
}

}  // namespace onnxprobe
