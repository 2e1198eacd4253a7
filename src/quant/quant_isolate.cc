// Introduced vs inherited for quantized layers. Each layer (B's computing node with the
// Q/DQ around it) runs alone on side B's runtime, fed with side A's float inputs quantized
// exactly as B quantizes them (QuantizeLinear's rounding and saturation, B's scales and zero
// points), and its output is compared with A's float output. A layer below the limit is run
// again with A's float inputs unquantized (QDQ: the DequantizeLinear outputs fed directly): if
// it is then within the limit, the input's quantization is what hurts, and that tensor's
// producing layer goes into the exclusion list too (it quantizes the same tensor).
#include <algorithm>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "onnxprobe/graph/graph.h"
#include "onnxprobe/quant/quant_session.h"
#include "onnxprobe/side/fetch_groups.h"
#include "onnxprobe/side/run_alone.h"
#include "quant/qlinear_ops.h"
#include "quant/quant_metrics.h"
#include "quant/quant_model.h"

namespace onnxprobe::quant {
namespace {

struct Boundary {
  std::string name_b, name_a;
  bool quantized = false;
  QuantParams params;
};

struct Plan {
  std::vector<int> nodes;
  std::vector<Boundary> bounds;
  std::string error;
};

const NodeInfo* ProducerOf(const GraphIndex& g, const std::string& t, int* k = nullptr) {
  const TensorEntry* e = g.Find(t);
  if (k != nullptr) *k = e == nullptr ? -1 : e->producer;
  return e == nullptr || e->producer < 0 ? nullptr : &g.nodes()[e->producer];
}

std::string Lookup(const std::map<std::string, std::string>& m, const std::string& k) {
  auto it = m.find(k);
  return it == m.end() ? "" : it->second;
}

// The nodes of layer `l` in B and the tensors fed from side A. `float_inputs`: activations
// enter after their DequantizeLinear, unquantized (fails for inputs held quantized by a QLinear
// op, which only reads quantized values).
Plan MakePlan(const Model& b, const QuantPairing& p, const QuantPairing::Layer& l,
              bool float_inputs) {
  Plan plan;
  const GraphIndex& g = b.index();
  std::set<int> nodes;
  std::string t = l.tensor_b;
  for (int guard = 0; guard < 8; ++guard) {  // output chain: Q/DQ back to the computing node
    int k;
    const NodeInfo* n = ProducerOf(g, t, &k);
    if (n == nullptr) {
      plan.error = "no node produces '" + t + "' in side B's model";
      return plan;
    }
    nodes.insert(k);
    if (k == l.node_b) break;
    if (!IsQ(n->op_type) && !IsDQ(n->op_type)) {
      plan.error = "'" + l.tensor_b + "' is not reached from node " + g.nodes()[l.node_b].name +
                   " through quantization nodes only";
      return plan;
    }
    t = n->inputs[0];
  }
  if (!nodes.count(l.node_b)) {
    plan.error = "'" + l.tensor_b + "' is too far from its computing node";
    return plan;
  }
  std::set<std::string> seen;
  auto add_bound = [&](const std::string& x, bool quantized, const QuantParams& qp,
                       const std::string& a) {
    if (!seen.insert(x).second) return;
    if (a.empty()) {
      plan.error = "input '" + x + "' of the layer has no counterpart in side A";
      return;
    }
    plan.bounds.push_back({x, a, quantized, qp});
  };
  for (const auto& x : g.nodes()[l.node_b].inputs) {
    if (x.empty() || IsConstant(b, x)) continue;
    int k;
    const NodeInfo* n = ProducerOf(g, x, &k);
    if (n != nullptr && n->op_type == "Constant") {
      nodes.insert(k);
      continue;
    }
    if (n != nullptr && IsDQ(n->op_type)) {
      const std::string& y = n->inputs[0];
      if (IsConstant(b, y)) {  // a quantized weight
        nodes.insert(k);
        continue;
      }
      int kq;
      const NodeInfo* q = ProducerOf(g, y, &kq);
      if (q != nullptr && IsQ(q->op_type) && IsConstant(b, q->inputs[0])) {
        nodes.insert(k);  // a float weight quantized in the graph (fake-quantized exports)
        nodes.insert(kq);
        continue;
      }
      if (float_inputs) {
        add_bound(x, false, QuantParams(), Lookup(p.a_of_float, x));
        continue;
      }
      nodes.insert(k);
      int axis = static_cast<int>(IntAttr(b, k, "axis", 1));
      auto qp = ReadParams(b, n->inputs[1], n->inputs.size() > 2 ? n->inputs[2] : "", axis);
      if (!qp.ok()) {
        plan.error = qp.status().message();
        return plan;
      }
      std::string a = Lookup(p.a_of_quantized, y);
      if (a.empty()) a = Lookup(p.a_of_float, x);
      add_bound(y, true, *qp, a);
      continue;
    }
    if (IsQuantizedTensor(b, x)) {
      if (float_inputs) {
        plan.error = "'" + x + "' is read quantized by a QLinear operator";
        return plan;
      }
      bool has = false;
      auto qp = ParamsOfTensor(b, x, &has);
      if (!qp.ok() || !has) {
        plan.error = qp.ok() ? "no quantization parameters for '" + x + "'" : qp.status().message();
        return plan;
      }
      add_bound(x, true, *qp, Lookup(p.a_of_quantized, x));
      continue;
    }
    add_bound(x, false, QuantParams(), Lookup(p.a_of_float, x));
  }
  plan.nodes.assign(nodes.begin(), nodes.end());
  return plan;
}

struct Outcome {
  bool ran = false;
  std::string error;
  Tensor out;  // B's output, real values
  double input_sqnr_db = std::numeric_limits<double>::infinity();
  std::string input_tensor;
  TensorQuantization input_quantization;  // of input_tensor
  // the worst input channel (axis 1) as B quantizes it: an outlier channel that sets the
  // scale hides the channels it crushes from the whole-tensor figure
  double input_worst_db = std::numeric_limits<double>::infinity();
  std::string input_worst;
  TensorQuantization input_worst_quantization;
};

Outcome Execute(Side& sb, const Model& b, const QuantPairing& p, const QuantPairing::Layer& l,
                const Plan& plan, const std::unordered_map<std::string, const Tensor*>& from_a,
                size_t* runs) {
  Outcome o;
  if (!plan.error.empty()) {
    o.error = plan.error;
    return o;
  }
  std::vector<Tensor> fed;  // owns quantized feeds
  fed.reserve(plan.bounds.size());
  SubgraphSpec spec;
  spec.nodes = plan.nodes;
  std::vector<std::pair<std::string, const Tensor*>> feed;
  for (const Boundary& bd : plan.bounds) {
    auto it = from_a.find(bd.name_a);
    if (it == from_a.end() || it->second == nullptr || it->second->empty()) {
      o.error = "side A did not provide '" + bd.name_a + "'";
      return o;
    }
    const Tensor& a = *it->second;
    if (bd.quantized) {
      auto q = Quantize(a, bd.params);
      if (!q.ok()) {
        o.error = q.status().message();
        return o;
      }
      auto back = Dequantize(*q, bd.params);
      if (back.ok()) {
        QuantRowMetrics m = MeasureRow(a, *back, &bd.params);
        if (m.sqnr_db < o.input_sqnr_db) {
          o.input_sqnr_db = m.sqnr_db;
          o.input_tensor = bd.name_a;
          o.input_quantization = MeasureTensorQuantization(a, bd.params);
        }
        double worst = m.sqnr_db;
        for (double c : m.channel_sqnr_db) worst = std::min(worst, c);
        if (worst < o.input_worst_db) {
          o.input_worst_db = worst;
          o.input_worst = bd.name_a;
          o.input_worst_quantization = o.input_tensor == bd.name_a
                                           ? o.input_quantization
                                           : MeasureTensorQuantization(a, bd.params);
        }
      }
      fed.push_back(std::move(*q));
      feed.emplace_back(bd.name_b, &fed.back());
    } else {
      feed.emplace_back(bd.name_b, &a);
    }
    spec.inputs.push_back(bd.name_b);
    spec.input_types.emplace_back(feed.back().second->dtype(), feed.back().second->shape());
  }
  spec.outputs = {l.tensor_b};
  std::string bytes;
  auto got = RunAlone(sb, b, spec, feed, &bytes);
  if (!bytes.empty()) ++*runs;  // cut out, so it ran
  if (!got.ok()) {
    o.error = got.status().message();
    return o;
  }
  Tensor out = std::move((*got)[0].tensor);
  if (!IsFloating(out.dtype())) {
    auto pit = p.params_b.find(l.tensor_b);
    if (pit == p.params_b.end()) {
      o.error = "no quantization parameters for the output '" + l.tensor_b + "'";
      return o;
    }
    auto d = Dequantize(out, pit->second);
    if (!d.ok()) {
      o.error = d.status().message();
      return o;
    }
    out = std::move(*d);
  }
  o.out = std::move(out);
  o.ran = true;
  return o;
}

std::string NodeName(const GraphIndex& g, int k) {
  const NodeInfo& n = g.nodes()[k];
  return n.name.empty() ? n.op_type + "#" + std::to_string(k) : n.name;
}

}  // namespace

Status IsolateLayers(QuantSession& s, Side& a, Side& b, const std::vector<NamedTensor>& inputs,
                     QuantReport* report) {
  const QuantPairing& p = s.pairing;
  if (b.model() == nullptr) {
    report->notes.push_back("layers were not isolated: side B is not a live model");
    return Status::Ok();
  }
  const Model& mb = *b.model();
  const Model& ma = *a.model();
  size_t n = std::min(p.layers.size(), s.options.max_layers);
  if (n < p.layers.size()) {
    report->notes.push_back("isolated the first " + std::to_string(n) + " of " +
                            std::to_string(p.layers.size()) + " quantized layers");
  }
  std::vector<Plan> plans, float_plans;
  std::vector<std::set<std::string>> needs(n);  // A tensors each layer reads
  for (size_t i = 0; i < n; ++i) {
    plans.push_back(MakePlan(mb, p, p.layers[i], false));
    float_plans.push_back(MakePlan(mb, p, p.layers[i], true));
    needs[i].insert(p.layers[i].tensor_a);
    for (const Plan* pl : {&plans.back(), &float_plans.back()}) {
      for (const auto& bd : pl->bounds) needs[i].insert(bd.name_a);
    }
  }
  std::unordered_map<std::string, const Tensor*> shared;
  for (const auto& in : inputs) shared[in.name] = &in.tensor;
  std::set<std::string> captured;  // what side A can hand out
  for (const auto& t : a.tensors()) captured.insert(t.name);
  // batches of consecutive layers whose A tensors fit the memory budget (one run of A each)
  const std::vector<std::pair<size_t, size_t>> batches =
      GroupByBudget(needs, a.tensors(), s.options.max_memory);
  // the layer that produces each A tensor (for input-caused errors)
  std::unordered_map<std::string, std::string> layer_of;
  for (size_t i = 0; i < n; ++i)
    layer_of[p.layers[i].tensor_a] = NodeName(ma.index(), p.layers[i].node_a);

  std::unordered_map<std::string, const Tensor*> from_a;
  std::vector<RunOutput> fetched;
  size_t batch = 0;
  const double lim = s.options.min_sqnr_db;
  for (size_t i = 0; i < n; ++i) {
    if (batch < batches.size() && i == batches[batch].first) {  // fetch this batch's A tensors
      from_a = shared;
      fetched.clear();
      std::set<std::string> want;
      for (size_t k = batches[batch].first; k < batches[batch].second; ++k) {
        for (const auto& x : needs[k]) {
          if (captured.count(x) && !shared.count(x)) want.insert(x);
        }
      }
      ++batch;
      if (!want.empty()) {
        auto got = a.Fetch(std::vector<std::string>(want.begin(), want.end()));
        if (!got.ok()) {
          report->notes.push_back("layers were not isolated: side A failed: " +
                                  got.status().message());
          report->layers.clear();
          report->exclude.clear();
          return Status::Ok();
        }
        fetched = std::move(*got);
      }
      for (const auto& o : fetched) from_a[o.name] = &o.tensor;
    }
    const QuantPairing::Layer& l = p.layers[i];
    QuantLayer q;
    q.node_a = NodeName(ma.index(), l.node_a);
    q.op_type = ma.index().nodes()[l.node_a].op_type;
    q.node_b = NodeName(mb.index(), l.node_b);
    q.tensor_a = l.tensor_a;
    q.tensor_b = l.tensor_b;
    q.float_input_sqnr_db = NAN;
    for (int k : plans[i].nodes) q.nodes_b.push_back(NodeName(mb.index(), k));
    Outcome o = Execute(b, mb, p, l, plans[i], from_a, &report->isolation_runs);
    auto ea = from_a.find(l.tensor_a);
    if (o.ran && (ea == from_a.end() || ea->second == nullptr)) {
      o.ran = false;
      o.error = "side A did not provide '" + l.tensor_a + "'";
    }
    if (!o.ran) {
      q.error = o.error;
      report->layers.push_back(std::move(q));
      continue;
    }
    q.isolated = true;
    auto pit = p.params_b.find(l.tensor_b);
    QuantRowMetrics m =
        MeasureRow(*ea->second, o.out, pit == p.params_b.end() ? nullptr : &pit->second);
    q.sqnr_db = m.sqnr_db;
    q.max_steps = m.max_steps;
    q.saturated = m.saturated;
    if (pit != p.params_b.end())
      q.output_quantization = MeasureTensorQuantization(*ea->second, pit->second);
    q.input_sqnr_db = o.input_sqnr_db;
    q.input_tensor = o.input_tensor;
    q.input_quantization = o.input_quantization;
    q.input_owner = layer_of.count(o.input_tensor) ? layer_of[o.input_tensor] : "";
    q.below_limit = q.sqnr_db < lim;
    if (q.below_limit) {
      // with B's optimizations on, float inputs would also change the kernel that runs (no
      // DequantizeLinear to fuse into a QLinear kernel), so the rerun would not compare like
      // with like: judge by the input's own quantization error then
      Outcome f;
      if (b.info().optimization_level == OptLevel::kDisabled)
        f = Execute(b, mb, p, l, float_plans[i], from_a, &report->isolation_runs);
      if (f.ran) {
        q.float_input_sqnr_db = MeasureRow(*ea->second, f.out, nullptr).sqnr_db;
        q.input_caused = q.float_input_sqnr_db >= lim;
      } else {
        // QLinear ops read quantized inputs only (and an optimized B fuses what it can): judge
        // by the input's own quantization error, channel by channel
        q.input_caused = o.input_worst_db < lim;
        if (q.input_caused) {
          q.input_tensor = o.input_worst;
          q.input_quantization = o.input_worst_quantization;
          q.input_owner = layer_of.count(o.input_worst) ? layer_of[o.input_worst] : "";
        }
      }
    }
    report->layers.push_back(std::move(q));
  }
  size_t missing = 0;
  for (const QuantLayer& q : report->layers) missing += !q.isolated;
  if (missing > 0 && a.info().optimization_level > OptLevel::kDisabled) {
    report->notes.push_back(std::to_string(missing) +
                            " layers were not isolated: side A runs with optimizations on and its "
                            "optimized graph fuses away their input or output tensors; run side A "
                            "with optimizations disabled to isolate every layer");
  }
  report->isolated = true;
  // rank: layers below the limit first, those that make their error themselves before those
  // whose input's quantization makes it, then by isolated SQNR (worst first)
  std::stable_sort(report->layers.begin(), report->layers.end(),
                   [](const QuantLayer& x, const QuantLayer& y) {
                     if (x.isolated != y.isolated) return x.isolated;
                     if (x.below_limit != y.below_limit) return x.below_limit;
                     if (x.input_caused != y.input_caused) return !x.input_caused;
                     return x.sqnr_db < y.sqnr_db;
                   });
  std::set<std::string> listed;
  auto list = [&](const std::string& node) {
    if (!node.empty() && listed.insert(node).second) report->exclude.push_back(node);
  };
  for (const QuantLayer& q : report->layers) {
    if (!q.below_limit) continue;
    list(q.node_a);
    if (q.input_caused) list(q.input_owner);
  }
  return Status::Ok();
}

}  // namespace onnxprobe::quant
