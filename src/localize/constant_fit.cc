// Which node of a multi-node plan introduces its error, when side A has no value between them
// (a PyTorch op that the exporter wrote as several ONNX nodes: a decomposed LayerNorm, a tanh
// GELU, a pooling with its Pad). Each scalar constant and float attribute of the plan's nodes is
// fitted in turn: the plan is run with that one value changed, searching (secant steps on the
// least-squares residual against side A's value) for a value that reproduces side A within the
// row's tolerance. A fault in one constant is undone by fitting that constant and by no other
// (the others change different elements in different proportions), so exactly one node whose
// constants fit names the culprit; several, or none, leave the culprit as isolation named it.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "localize/isolation.h"
#include "model/model_impl.h"
#include "onnxprobe/common/format.h"

namespace onnxprobe::isolation {
namespace {

constexpr size_t kMaxCandidates = 16;  // constants tried per culprit
constexpr int kMaxTrials = 10;         // runs per constant (the secant converges in 3-6)
constexpr size_t kMaxFits = 8;         // culprits fitted per localization (the first found)

struct Candidate {
  int node = -1;
  std::string input;      // a scalar constant read by the node, or
  std::string attribute;  // a float attribute of the node
  double value = 0;
  DType dtype = DType::kFloat32;
  Shape shape;  // the constant's ([] or [1]: fed back as it is declared)
};

// Residual of `observed` against `expected` (float32), in double; false when a value the
// reference has finite is not finite (no direction to step in).
bool Residual(const Tensor& expected, const Tensor& observed, std::vector<double>* r) {
  if (expected.dtype() != DType::kFloat32 || observed.dtype() != DType::kFloat32 ||
      expected.num_elements() != observed.num_elements())
    return false;
  const float* e = expected.data_as<float>();
  const float* o = observed.data_as<float>();
  r->assign(expected.num_elements(), 0.0);
  for (uint64_t i = 0; i < expected.num_elements(); ++i) {
    if (!std::isfinite(e[i])) continue;
    if (!std::isfinite(o[i])) return false;
    (*r)[i] = static_cast<double>(o[i]) - e[i];
  }
  return true;
}

double Dot(const std::vector<double>& x, const std::vector<double>& y) {
  double s = 0;
  for (size_t i = 0; i < x.size(); ++i) s += x[i] * y[i];
  return s;
}

std::vector<Candidate> Candidates(const Ctx& cx, const Plan& p) {
  const GraphIndex& idx = cx.g.index();
  std::set<int> in_plan(p.nodes.begin(), p.nodes.end());
  // one-element initializers, from the indexed graph's dims: a weight's values are read only
  // when it is a scalar, never a large tensor's to learn its size
  std::set<std::string> scalars;
  for (const auto& t : cx.g.impl().proto.graph().initializer()) {
    int64_t n = 1;
    for (int64_t d : t.dims()) n *= d;
    if (n == 1) scalars.insert(t.name());
  }
  std::vector<Candidate> out;
  for (int k : p.nodes) {
    const NodeInfo& n = idx.nodes()[k];
    if (n.op_type == "Constant") continue;
    for (const auto& x : n.inputs) {
      const TensorEntry* e = x.empty() ? nullptr : idx.Find(x);
      if (e == nullptr) continue;
      // an initializer the plan does not receive from side A, or a Constant node of the plan
      bool held = (e->kind == TensorKind::kInitializer && scalars.count(x)) ||
                  (e->producer >= 0 && in_plan.count(e->producer) &&
                   idx.nodes()[e->producer].op_type == "Constant");
      if (!held || std::find(p.boundary.begin(), p.boundary.end(), x) != p.boundary.end()) continue;
      auto t = ConstantTensor(cx.g, x);
      if (!t.ok() || t->num_elements() != 1) continue;
      // a constant two of the plan's nodes read is one candidate (its first reader)
      bool seen = false;
      for (const auto& o : out) seen = seen || o.input == x;
      if (seen) continue;
      Candidate c{k, x, "", 0, t->dtype(), t->shape()};
      if (t->dtype() == DType::kFloat32)
        c.value = t->data_as<float>()[0];
      else if (t->dtype() == DType::kFloat64)
        c.value = t->data_as<double>()[0];
      else
        continue;
      out.push_back(c);
    }
    for (const auto& [name, v] : NodeFloatAttributes(cx.g, n))
      out.push_back(Candidate{k, "", name, v, DType::kFloat32, {}});
    if (out.size() >= kMaxCandidates) break;
  }
  if (out.size() > kMaxCandidates) out.resize(kMaxCandidates);
  return out;
}

Overrides With(const Candidate& c, double x) {
  Overrides ov;
  if (!c.attribute.empty()) {
    ov.attributes.push_back({c.node, c.attribute, static_cast<float>(x)});
    return ov;
  }
  auto t = Tensor::Allocate(c.dtype, c.shape);
  if (!t.ok()) return ov;
  if (c.dtype == DType::kFloat32)
    t->data_as<float>()[0] = static_cast<float>(x);
  else
    t->data_as<double>()[0] = x;
  ov.constants.emplace_back(c.input, std::move(*t));
  return ov;
}

// The value of `c` that makes the plan reproduce side A within `tol`, if the search finds one:
// the least-squares value (secant steps until they stop improving), judged like the row.
bool Fit(Ctx& cx, const Plan& p, const Tolerance& tol, const Candidate& c, double* fitted) {
  struct Trial {
    double x = 0, ss = 0;
    std::vector<double> r;
    bool within = false;
  };
  auto trial = [&](double x, Trial* t) {
    Overrides ov = With(c, x);
    Run run = Execute(cx, p, {}, {}, &ov);
    if (!run.error.empty() || run.expected == nullptr) return false;
    t->x = x;
    if (!Residual(*run.expected, run.observed, &t->r)) return false;
    t->ss = Dot(t->r, t->r);
    TensorResult judged;
    judged.tolerance = tol;
    JudgeRow(*run.expected, run.observed, cx.job.policy, cx.job.kernel, &judged);
    t->within = judged.within_tolerance;
    return true;
  };
  Trial t0, t1;
  double step = c.value != 0 ? 0.01 * c.value : 0.01;
  if (!trial(c.value, &t0) || t0.within) return false;
  if (!trial(c.value + step, &t1)) return false;
  Trial best = t1.ss < t0.ss ? t1 : t0;
  for (int n = 2; n < kMaxTrials; ++n) {
    // Gauss-Newton on the residual with the secant's slope: x - (d.r)/(d.d) * (x1 - x0)
    std::vector<double> d(t1.r.size());
    for (size_t i = 0; i < d.size(); ++i) d[i] = t1.r[i] - t0.r[i];
    double dd = Dot(d, d);
    if (!(dd > 0)) break;  // the output does not depend on this constant
    double x = t1.x - Dot(d, t1.r) / dd * (t1.x - t0.x);
    if (!std::isfinite(x) || std::fabs(x - t1.x) <= 1e-7 * std::fabs(t1.x)) break;
    Trial t2;
    if (!trial(x, &t2)) break;
    if (t2.ss < best.ss) best = t2;
    if (t2.ss >= t1.ss && t2.ss >= t0.ss) break;  // no longer improving
    t0 = std::move(t1);
    t1 = std::move(t2);
  }
  if (!best.within) return false;
  *fitted = best.x;
  return true;
}

bool AllFinite(const Tensor& t) {
  if (t.dtype() == DType::kFloat32) {
    const float* v = t.data_as<float>();
    for (uint64_t i = 0; i < t.num_elements(); ++i) {
      if (!std::isfinite(v[i])) return false;
    }
  } else if (t.dtype() == DType::kFloat64) {
    const double* v = t.data_as<double>();
    for (uint64_t i = 0; i < t.num_elements(); ++i) {
      if (!std::isfinite(v[i])) return false;
    }
  }
  return true;
}

// The plan's output has NaN/Inf where side A's is finite: the first node (topological order)
// making a non-finite value from finite inputs is where it is born. Whether one was named.
bool NameNonFiniteSource(Ctx& cx, const Plan& p, Culprit* c) {
  Overrides every;
  every.every_output = true;
  Run run = Execute(cx, p, {}, {}, &every);
  if (!run.error.empty() || run.outputs.empty()) return false;
  std::set<std::string> bad;
  for (const auto& o : run.outputs) {
    if (!o.tensor.empty() && !AllFinite(o.tensor)) bad.insert(o.name);
  }
  for (const auto& [name, t] : run.feed) {
    if (!AllFinite(*t)) bad.insert(name);
  }
  const GraphIndex& idx = cx.g.index();
  std::vector<int> order = p.nodes;
  std::sort(order.begin(), order.end());
  // values the model holds (a -inf mask) are not born here
  for (int k : order) {
    for (const auto& x : idx.nodes()[k].inputs) {
      if (x.empty() || bad.count(x) || !FixedByModel(idx, x)) continue;
      auto t = ConstantTensor(cx.g, x);
      if (t.ok() && !AllFinite(*t)) bad.insert(x);
    }
  }
  for (int k : order) {
    const NodeInfo& n = idx.nodes()[k];
    bool fixed = true;  // computes from weights alone (a Constant): holds, does not compute
    for (const auto& o : n.outputs) fixed = fixed && (o.empty() || FixedByModel(idx, o));
    if (fixed) continue;
    bool makes = false, reads = false;
    for (const auto& o : n.outputs) makes = makes || bad.count(o);
    for (const auto& x : n.inputs) reads = reads || bad.count(x);
    if (!makes) continue;
    if (reads) return false;  // fed a non-finite value: not born in the plan
    if (NodeName(n, k) != c->node)
      c->reason = NodeName(n, k) + " makes NaN/Inf from finite inputs (isolation named " + c->node +
                  "); " + c->reason;
    c->node = NodeName(n, k);
    c->op_type = n.op_type;
    return true;
  }
  return false;
}

std::string Describe(const Candidate& c) {
  return c.attribute.empty() ? "input '" + c.input + "'" : "attribute " + c.attribute;
}

}  // namespace

void FitConstants(Ctx& cx, const Plan& p, const Tolerance& tol, Culprit* c) {
  const GraphIndex& idx = cx.g.index();
  size_t computing = 0;
  for (int k : p.nodes) computing += idx.nodes()[k].op_type != "Constant";
  if (computing < 2 || cx.fits >= kMaxFits) return;
  ++cx.fits;
  {
    Run base = Execute(cx, p);
    std::vector<double> r;
    if (!base.error.empty() || base.expected == nullptr) return;
    // the fit measures float32 residuals; other outputs are left as isolation named them
    if (base.expected->dtype() != DType::kFloat32 || base.observed.dtype() != DType::kFloat32 ||
        base.expected->num_elements() != base.observed.num_elements())
      return;
    if (!Residual(*base.expected, base.observed, &r)) {  // non-finite where A is finite
      NameNonFiniteSource(cx, p, c);
      return;
    }
  }
  std::vector<Candidate> cands = Candidates(cx, p);
  std::set<int> fitting;
  ConstantFit found;
  for (const Candidate& k : cands) {
    if (cx.job.Stopped()) return;
    double x = 0;
    if (!Fit(cx, p, tol, k, &x)) continue;
    if (fitting.insert(k.node).second && fitting.size() > 1) return;  // ambiguous: keep the name
    const NodeInfo& n = idx.nodes()[k.node];
    found = ConstantFit{NodeName(n, k.node), n.op_type, Describe(k), k.value, x};
  }
  if (fitting.size() != 1) return;
  c->fit = found;
  c->reason = "its " + found.constant + " is " + FormatNumber(found.value, 6) + "; with " +
              FormatNumber(found.fitted, 6) + " the isolated nodes reproduce side A's value" +
              (found.node == c->node ? "" : " (isolation named " + c->node + ")") + "; " +
              c->reason;
  c->node = found.node;
  c->op_type = found.op_type;
}

}  // namespace onnxprobe::isolation
