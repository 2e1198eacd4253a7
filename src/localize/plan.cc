// Plans for isolation: building, fetching for and running one, naming its culprit.
#include <algorithm>
#include <cmath>
#include <deque>
#include <set>

#include "localize/isolation.h"
#include "localize/pass_through.h"
#include "onnxprobe/common/format.h"
#include "onnxprobe/engine/index_ties.h"
#include "onnxprobe/graph/graph.h"
#include "onnxprobe/side/run_alone.h"

namespace onnxprobe::isolation {

// The node producing `name_b` plus the nodes it needs that side A cannot provide (nodes only in
// B), and any node in `expand` (the path from a culprit to the failure, for repros).
Plan MakePlan(const Ctx& cx, const std::string& name_b, size_t max_nodes,
              const std::set<int>& expand, bool through_fused) {
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
  // nodes that compute from B's initializers alone (weight preparation: Slice, Concat, Transpose
  // of weights, Constant) must run in B whatever their number and read nothing from A, so only
  // the nodes that compute on activations count against `max_nodes`
  size_t counted = 1;
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
      // a tensor fixed by B's own initializers (a Transpose of a weight) is computed from them,
      // never fed from A: A's copy would replace a changed weight with the original
      bool weights_only = FixedByModel(idx, x);
      if (cx.a_names.count(cx.AName(x)) && !fused && !expand.count(e->producer) && !weights_only) {
        boundary.insert(x);
      } else if (e->producer >= 0 && !nodes.count(e->producer)) {
        if (!weights_only && counted >= max_nodes) {
          p.error = "more than " + std::to_string(max_nodes) + " nodes between '" + name_b +
                    "' and tensors side A provides";
          return p;
        }
        counted += weights_only ? 0 : 1;
        nodes.insert(e->producer);
        queue.push_back(e->producer);
      }
    }
  }
  p.nodes.assign(nodes.begin(), nodes.end());
  p.weight_nodes = nodes.size() - counted;
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

// Builds the plan's model and runs it on side B's runtime with side A's tensors.
// float32 <-> float16/bfloat16, rounded to nearest even; other pairs are not converted.
Expected<Tensor> CastFloat(const Tensor& t, DType to) {
  auto narrow = [](DType d) { return d == DType::kFloat16 || d == DType::kBFloat16; };
  bool down = t.dtype() == DType::kFloat32 && narrow(to);
  bool up = narrow(t.dtype()) && to == DType::kFloat32;
  if (!down && !up) return InvalidArgument("no float conversion");
  OP_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(to, t.shape()));
  for (uint64_t i = 0; i < t.num_elements(); ++i) {
    if (up) {
      out.data_as<float>()[i] = static_cast<float>(ElementAsDouble(t, i));
    } else {
      float v = t.data_as<float>()[i];
      out.data_as<uint16_t>()[i] = to == DType::kFloat16 ? FloatToHalf(v) : FloatToBFloat16(v);
    }
  }
  return out;
}

Run Execute(Ctx& cx, const Plan& p, const std::set<int>& drop,
            const std::vector<std::pair<std::string, std::string>>& aliases,
            const Overrides* overrides) {
  Run run;
  SubgraphSpec spec;
  std::set<std::string> replaced;
  if (overrides != nullptr) {
    for (const auto& [name, t] : overrides->constants) replaced.insert(name);
    spec.float_attributes = overrides->attributes;
  }
  const auto& nodes = cx.g.index().nodes();
  for (int k : p.nodes) {
    bool fed = nodes[k].op_type == "Constant" && nodes[k].outputs.size() == 1 &&
               replaced.count(nodes[k].outputs[0]);
    if (!drop.count(k) && !fed) spec.nodes.push_back(k);
  }
  spec.aliases = aliases;
  auto feed = [&](const std::string& x, const Tensor* t) {
    spec.inputs.push_back(x);
    spec.input_types.emplace_back(t->dtype(), t->shape());
    run.feed.emplace_back(x, t);
  };
  if (overrides != nullptr) {
    for (const auto& [name, t] : overrides->constants) feed(name, &t);
  }
  for (const auto& x : p.boundary) {
    auto it = cx.from_a.find(cx.AName(x));
    if (it == cx.from_a.end() || it->second.empty()) {
      run.error = "side A did not provide '" + x + "'";
      return run;
    }
    auto bt = cx.b_dtypes.find(x);
    if (bt != cx.b_dtypes.end() && bt->second != it->second.dtype()) {
      auto cast = CastFloat(it->second, bt->second);
      if (cast.ok()) {
        run.owned.push_back(std::move(*cast));
        feed(x, &run.owned.back());
        continue;
      }
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
  auto ot = cx.b_dtypes.find(p.name_b);
  // a sequence or map output (compared as its values) keeps the type the model gives it
  const ValueInfo* declared = cx.g.FindValueInfo(p.name_b);
  if (declared == nullptr || declared->elem_type != 0)
    spec.output_types = {
        {ot != cx.b_dtypes.end() ? ot->second : e->second.dtype(), e->second.shape()}};
  if (overrides != nullptr && overrides->every_output) {
    for (int k : spec.nodes) {
      for (const auto& o : nodes[k].outputs) {
        if (!o.empty() && o != p.name_b) spec.outputs.push_back(o);
      }
    }
  }
  if (cx.job.Stopped()) {
    run.error = "stopped by the caller";
    return run;
  }
  auto got = RunAlone(cx.b, cx.g, spec, run.feed, &run.bytes);
  if (run.bytes.empty()) {  // not cut out: nothing ran
    run.error = got.status().message();
    return run;
  }
  ++cx.out->isolation_runs;
  if (cx.on_run) cx.on_run(cx.out->isolation_runs);
  if (!got.ok()) {
    run.error = got.status().message();
    return run;
  }
  run.observed = (*got)[0].tensor;  // shares the data: outputs keep the plan's output too
  if (overrides != nullptr && overrides->every_output) run.outputs = std::move(*got);
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

namespace {
constexpr double kStandOut = 8;         // times the median isolated error of the nodes examined
constexpr double kNoiseCeiling = 1e-5;  // normalized float32 rounding of one module stays below
}  // namespace

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

namespace {

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

}  // namespace

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
  // a sequence or map output (compared as its values) keeps the type the model gives it
  const ValueInfo* declared = cx.g.FindValueInfo(p.name_b);
  if (declared == nullptr || declared->elem_type != 0)
    alone.output_types = {{expected.dtype(), expected.shape()}};
  if (cx.job.Stopped()) return;
  std::string bytes;
  auto got = RunAlone(cx.b, cx.g, alone, feed, &bytes);
  if (bytes.empty()) return;  // not cut out: nothing ran
  ++cx.out->isolation_runs;
  if (cx.on_run) cx.on_run(cx.out->isolation_runs);
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

void NameStaticReader(const Ctx& cx, Culprit* c) {
  const GraphIndex& idx = cx.g.index();
  const TensorEntry* t = idx.Find(c->tensor);
  if (t == nullptr) t = idx.Find(cx.AName(c->tensor));
  if (t == nullptr || t->producer < 0 || !FixedByModel(idx, t->name)) return;
  // a node without inputs (a Constant) holds a weight, as an initializer does: the node that
  // computes with it is named (exporters such as paddle2onnx and tf2onnx keep weights there)
  const bool held = idx.nodes()[t->producer].inputs.empty();
  if (held && idx.nodes()[t->producer].op_type != "Constant") return;  // e.g. a random generator
  // forward through static nodes to the first node in topological order that also reads data
  std::set<int> seen;
  std::vector<std::string> todo = {t->name};
  int reader = -1;
  while (!todo.empty()) {
    const TensorEntry* e = idx.Find(todo.back());
    todo.pop_back();
    if (e == nullptr) continue;
    for (int k : e->consumers) {
      if (!seen.insert(k).second) continue;
      const NodeInfo& n = idx.nodes()[k];
      bool data = false;
      for (const auto& in : n.inputs) data = data || !FixedByModel(idx, in);
      if (data) {
        if (reader < 0 || k < reader) reader = k;
      } else {
        for (const auto& o : n.outputs) todo.push_back(o);
      }
    }
  }
  if (reader < 0) return;
  const NodeInfo& n = idx.nodes()[reader];
  std::string fixed = c->node;
  if (std::find(c->nodes.begin(), c->nodes.end(), fixed) == c->nodes.end())
    c->nodes.push_back(fixed);
  c->node = NodeName(n, reader);
  c->op_type = n.op_type;
  std::string why =
      held ? "computes with the weight Constant node " + fixed + " holds (" + t->name +
                 ", which differs)"
           : "computes with what " + fixed +
                 " makes from the model's fixed values alone (a changed initializer shows there)";
  c->reason = c->reason.empty() ? why : why + "; " + c->reason;
}

}  // namespace onnxprobe::isolation
