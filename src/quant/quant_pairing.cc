// Structural pairing of a float model with its quantized version. B's values are seen through
// their quantization: a DequantizeLinear(QuantizeLinear(x)) chain stands for x, a QLinear op for
// its float op, a dequantized initializer for the float weight. A's nodes are matched in
// topological order to B nodes of the same (or the quantized) op reading the same values;
// ambiguities (three MatMuls reading one input) are settled by the weights' values. A Relu or
// Clip that B folded into the quantization of its input's producer pairs with that producer's
// quantized output, never with the unclipped tensor. Names are never the rule.
#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "onnxprobe/quant/quant.h"
#include "quant/qlinear_ops.h"
#include "quant/quant_model.h"

namespace onnxprobe {

const char* QuantFormatName(QuantFormat f) {
  switch (f) {
    case QuantFormat::kNone:
      return "none";
    case QuantFormat::kQdq:
      return "qdq";
    case QuantFormat::kQOperator:
      return "qoperator";
    case QuantFormat::kMixed:
      return "mixed";
  }
  return "?";
}

QuantFormat DetectQuantFormat(const Model& b) {
  // QOperator models dequantize activations around float islands too; QDQ is recognized by
  // a DequantizeLinear of a constant (a weight) feeding a float op, or by DequantizeLinear
  // alone when there is no QLinear op at all.
  bool qlinear = false, dq = false, dq_weight = false;
  const GraphIndex& g = b.index();
  for (const auto& n : g.nodes()) {
    if (quant::FindQLinearOp(n.op_type) != nullptr) qlinear = true;
    if (!quant::IsDQ(n.op_type) || n.inputs.empty() || n.outputs.empty()) continue;
    dq = true;
    if (!quant::IsConstant(b, n.inputs[0])) continue;
    const TensorEntry* e = g.Find(n.outputs[0]);
    for (int c : e == nullptr ? std::vector<int>() : e->consumers) {
      const std::string& op = g.nodes()[c].op_type;
      if (!quant::IsQ(op) && quant::FindQLinearOp(op) == nullptr) dq_weight = true;
    }
  }
  if (qlinear && dq_weight) return QuantFormat::kMixed;
  if (qlinear) return QuantFormat::kQOperator;
  return dq ? QuantFormat::kQdq : QuantFormat::kNone;
}

namespace {

using quant::IsDQ;
using quant::IsQ;

struct Ctx {
  const Model& a;
  const Model& b;
  const std::set<std::string>& hidden_b;
  const GraphIndex& ga;
  const GraphIndex& gb;
  QuantPairing* out;
  std::unordered_map<std::string, std::string> m;  // A tensor -> B canonical value
  // B canonical value -> (node, slot) reading it (through Q/DQ), Q/DQ nodes excluded
  std::unordered_map<std::string, std::vector<std::pair<int, int>>> readers;
  std::unordered_set<int> used_b;
  std::unordered_map<std::string, std::string> folded_into;  // A pre-fold tensor -> fold output
  std::unordered_set<std::string> fold_outputs;
  std::map<std::string, const QuantParams*> unused;
};

const NodeInfo* Producer(const GraphIndex& g, const std::string& t) {
  const TensorEntry* e = g.Find(t);
  return e == nullptr || e->producer < 0 ? nullptr : &g.nodes()[e->producer];
}

// The value a B tensor stands for: through DequantizeLinear and QuantizeLinear to the first
// tensor that is neither (an initializer, a graph input, a computing node's output).
std::string Canon(const GraphIndex& g, std::string t) {
  for (int guard = 0; guard < 64; ++guard) {
    const NodeInfo* p = Producer(g, t);
    if (p == nullptr || (!IsDQ(p->op_type) && !IsQ(p->op_type)) || p->inputs.empty()) return t;
    t = p->inputs[0];
  }
  return t;
}

// The B input slot holding float input `i` of `n` (op table for QLinear ops; same slot else).
int SlotB(const NodeInfo& nb, int i) {
  const quant::QLinearOp* q = quant::FindQLinearOp(nb.op_type);
  if (q == nullptr) return i;
  if (nb.op_type == "QLinearConcat") return 2 + 3 * i;
  return i < static_cast<int>(q->slots.size()) ? q->slots[i] : -1;
}

bool OpCompatible(const NodeInfo& na, const NodeInfo& nb) {
  if (na.op_type == nb.op_type) return true;
  const quant::QLinearOp* q = quant::FindQLinearOp(nb.op_type);
  return q != nullptr && na.op_type == q->float_op;
}

// Ops that move quantized values without changing them (QOperator models run them on int8).
bool Transparent(const std::string& op) {
  static const std::set<std::string> kOps = {
      "Transpose", "Reshape", "Flatten", "Squeeze",      "Unsqueeze",    "MaxPool", "Slice",
      "Gather",    "Split",   "Resize",  "DepthToSpace", "SpaceToDepth", "Identity"};
  return kOps.count(op) > 0;
}

// Through ops that only move values, the node that quantized `t` (null when none did).
const NodeInfo* QuantizingNode(const GraphIndex& g, std::string t) {
  for (int guard = 0; guard < 64; ++guard) {
    const NodeInfo* p = Producer(g, t);
    if (p == nullptr) return nullptr;
    if (IsQ(p->op_type) || p->op_type == "DynamicQuantizeLinear") return p;
    const quant::QLinearOp* q = quant::FindQLinearOp(p->op_type);
    if (q != nullptr) return q->out_scale >= 0 ? p : nullptr;
    if (!Transparent(p->op_type) || p->inputs.empty()) return nullptr;
    t = p->inputs[0];
  }
  return nullptr;
}

bool IsQuantizedValue(const GraphIndex& g, const std::string& t) {
  return QuantizingNode(g, t) != nullptr;
}

// The quantization of a B tensor, when it has one: a QuantizeLinear's or DequantizeLinear's
// parameters, or a QLinear op's output parameters.
Expected<QuantParams> ParamsOf(const Model& b, const std::string& t, bool* has) {
  *has = false;
  const GraphIndex& g = b.index();
  const TensorEntry* e = g.Find(t);
  if (e == nullptr || e->producer < 0) return QuantParams();
  if (const NodeInfo* qn = QuantizingNode(g, t); qn != nullptr) e = g.Find(qn->outputs[0]);
  const NodeInfo& p = g.nodes()[e->producer];
  auto read = [&](const std::string& s, const std::string& z, int axis) -> Expected<QuantParams> {
    *has = true;
    auto r = quant::ReadParams(b, s, z, axis);
    if (!r.ok()) return r.status().WithContext("quantization of '" + t + "' (" + p.name + ")");
    return r;
  };
  if (IsQ(p.op_type) || IsDQ(p.op_type)) {
    if (p.inputs.size() < 2) return QuantParams();
    int axis = static_cast<int>(quant::IntAttr(b, e->producer, "axis", 1));
    return read(p.inputs[1], p.inputs.size() > 2 ? p.inputs[2] : "", axis);
  }
  const quant::QLinearOp* q = quant::FindQLinearOp(p.op_type);
  if (q != nullptr && q->out_scale >= 0 && static_cast<int>(p.inputs.size()) > q->out_scale &&
      !p.inputs[q->out_scale].empty()) {
    std::string zp =
        static_cast<int>(p.inputs.size()) > q->out_zero_point ? p.inputs[q->out_zero_point] : "";
    return read(p.inputs[q->out_scale], zp, 1);
  }
  return QuantParams();
}

// B tensors carrying value `v`: its DequantizeLinear(QuantizeLinear(v)) outputs, then the
// quantized tensors (QuantizeLinear outputs), in graph order.
void Carriers(const GraphIndex& g, const std::string& v, std::vector<std::string>* dq,
              std::vector<std::string>* q) {
  const TensorEntry* e = g.Find(v);
  if (e == nullptr) return;
  for (int c : e->consumers) {
    const NodeInfo& n = g.nodes()[c];
    if (IsDQ(n.op_type) && !n.outputs.empty()) dq->push_back(n.outputs[0]);  // v quantized
    if (!IsQ(n.op_type) || n.outputs.empty()) continue;
    q->push_back(n.outputs[0]);
    const TensorEntry* qe = g.Find(n.outputs[0]);
    if (qe == nullptr) continue;
    for (int d : qe->consumers) {
      const NodeInfo& dn = g.nodes()[d];
      if (IsDQ(dn.op_type) && !dn.outputs.empty()) dq->push_back(dn.outputs[0]);
    }
  }
}

// A's value of a constant input and B's dequantized value at the matching slot.
struct WeightPair {
  std::string name_b;
  QuantParams params;
  bool quantized = false;
  Tensor value_b;
};

Expected<WeightPair> WeightOfB(const Ctx& cx, const NodeInfo& nb, int slot) {
  WeightPair w;
  if (slot < 0 || slot >= static_cast<int>(nb.inputs.size()) || nb.inputs[slot].empty())
    return NotFound("no input");
  const std::string& x = nb.inputs[slot];
  const quant::QLinearOp* q = quant::FindQLinearOp(nb.op_type);
  if (q != nullptr && q->triples && slot != q->bias_slot) {  // weight with scale, zp beside it
    w.name_b = x;
    int axis = nb.op_type == "QLinearConv" ? 0 : -1;
    OP_ASSIGN_OR_RETURN(
        w.params,
        quant::ReadParams(cx.b, nb.inputs[slot + 1],
                          slot + 2 < static_cast<int>(nb.inputs.size()) ? nb.inputs[slot + 2] : "",
                          axis));
    w.quantized = true;
  } else if (const NodeInfo* p = Producer(cx.gb, x); p != nullptr && IsDQ(p->op_type)) {
    w.name_b = p->inputs[0];
    // a float weight quantized in the graph (fake-quantized exports): the float initializer
    if (const NodeInfo* q = Producer(cx.gb, w.name_b);
        q != nullptr && IsQ(q->op_type) && quant::IsConstant(cx.b, q->inputs[0]))
      w.name_b = q->inputs[0];
    const TensorEntry* e = cx.gb.Find(x);
    int axis = static_cast<int>(quant::IntAttr(cx.b, e->producer, "axis", 1));
    OP_ASSIGN_OR_RETURN(
        w.params,
        quant::ReadParams(cx.b, p->inputs[1], p->inputs.size() > 2 ? p->inputs[2] : "", axis));
    w.quantized = true;
  } else {
    w.name_b = x;
  }
  if (!quant::IsConstant(cx.b, w.name_b)) return NotFound("not constant");
  OP_ASSIGN_OR_RETURN(Tensor raw, ConstantTensor(cx.b, w.name_b));
  if (w.quantized && w.params.per_channel() && w.params.axis < 0) {
    // QLinearMatMul/QGemm per-channel: the axis whose size is the number of scales
    for (size_t d = raw.shape().size(); d-- > 0;) {
      if (raw.shape()[d] == static_cast<int64_t>(w.params.scale.size())) {
        w.params.axis = static_cast<int>(d);
        break;
      }
    }
  }
  if (w.quantized && IsFloating(raw.dtype())) {  // quantized in the graph: as B does
    OP_ASSIGN_OR_RETURN(Tensor q, Quantize(raw, w.params));
    OP_ASSIGN_OR_RETURN(w.value_b, Dequantize(q, w.params));
  } else if (w.quantized) {
    OP_ASSIGN_OR_RETURN(w.value_b, Dequantize(raw, w.params));
  } else {
    w.value_b = std::move(raw);
  }
  return w;
}

// Relative squared error of B's weight against A's (infinity when shapes differ).
double WeightDistance(const Tensor& a, const Tensor& b) {
  if (a.shape() != b.shape()) return std::numeric_limits<double>::infinity();
  double num = 0, den = 0;
  for (uint64_t i = 0; i < a.num_elements(); ++i) {
    double x = ElementAsDouble(a, i), y = ElementAsDouble(b, i);
    num += (y - x) * (y - x);
    den += x * x;
  }
  return den == 0 ? num : num / den;
}

bool IsActivation(const Ctx& cx, const std::string& t) {
  return !t.empty() && !quant::IsConstant(cx.a, t);
}

// The B node standing for A's node `ia`, or -1.
int MatchNode(Ctx& cx, int ia) {
  const NodeInfo& na = cx.ga.nodes()[ia];
  std::vector<std::pair<int, std::string>> acts;  // (input index, B value)
  for (size_t i = 0; i < na.inputs.size(); ++i) {
    if (!IsActivation(cx, na.inputs[i])) continue;
    auto it = cx.m.find(na.inputs[i]);
    if (it == cx.m.end()) return -1;
    acts.emplace_back(static_cast<int>(i), it->second);
  }
  if (acts.empty()) return -1;
  auto r = cx.readers.find(acts[0].second);
  if (r == cx.readers.end()) return -1;
  std::vector<int> cands;
  for (const auto& [nb, slot] : r->second) {
    const NodeInfo& n = cx.gb.nodes()[nb];
    if (cx.used_b.count(nb) || !OpCompatible(na, n) || SlotB(n, acts[0].first) != slot) continue;
    bool ok = n.outputs.size() >= 1;
    for (const auto& [i, v] : acts) {
      int s = SlotB(n, i);
      ok = ok && s >= 0 && s < static_cast<int>(n.inputs.size()) && Canon(cx.gb, n.inputs[s]) == v;
    }
    if (ok && std::find(cands.begin(), cands.end(), nb) == cands.end()) cands.push_back(nb);
  }
  // the weights decide: a B node whose weight has another shape is not this node; among the
  // rest, the one whose weights are closest to A's (three MatMuls reading one input)
  int best = -1;
  double best_d = std::numeric_limits<double>::infinity();
  for (int nb : cands) {
    const NodeInfo& n = cx.gb.nodes()[nb];
    double d = 0;
    bool fits = true;
    for (size_t i = 0; i < na.inputs.size() && fits; ++i) {
      if (na.inputs[i].empty() || IsActivation(cx, na.inputs[i])) continue;
      auto wa = ConstantTensor(cx.a, na.inputs[i]);
      auto wb = WeightOfB(cx, n, SlotB(n, static_cast<int>(i)));
      if (!wa.ok() || !wb.ok()) continue;  // unreadable here: neither for nor against
      if (wa->num_elements() != wb->value_b.num_elements()) {
        fits = false;
        continue;
      }
      // an int32 bias held raw (QLinearConv, QGemm) is not on A's scale: its shape only
      if (wb->quantized || IsFloating(wb->value_b.dtype())) d += WeightDistance(*wa, wb->value_b);
    }
    if (fits && (best < 0 || d < best_d)) best = nb, best_d = d;
  }
  return best;
}

bool Foldable(const NodeInfo& n) { return n.op_type == "Relu" || n.op_type == "Clip"; }

// B tensor that represents A's tensor `t` (value `v`), "" when none can be captured.
// `hidden`: B tensors the comparison cannot capture (the isolation, which runs B's nodes in a
// model of their own, can: it passes an empty set).
std::string Representative(Ctx& cx, const std::string& t, const std::string& v,
                           const std::set<std::string>& hidden) {
  std::vector<std::string> dq, q;
  Carriers(cx.gb, v, &dq, &q);
  auto pick = [&](const std::vector<std::string>& xs) -> std::string {
    for (const auto& x : xs) {
      if (!hidden.count(x)) return x;
    }
    return "";
  };
  bool v_quantized = IsQuantizedValue(cx.gb, v);
  bool v_capturable = cx.gb.Find(v) != nullptr && Producer(cx.gb, v) != nullptr && !hidden.count(v);
  if (cx.folded_into.count(t)) {  // its Relu/Clip was folded: only the unclipped value pairs
    return v_quantized || !v_capturable ? "" : v;
  }
  std::string r = pick(dq);
  if (r.empty()) r = pick(q);
  if (r.empty() && v_capturable) r = v;
  return r;
}

}  // namespace

namespace quant {
Expected<QuantParams> ParamsOfTensor(const Model& b, const std::string& t, bool* has) {
  return ParamsOf(b, t, has);
}
bool IsQuantizedTensor(const Model& b, const std::string& t) {
  return IsQuantizedValue(b.index(), t);
}
}  // namespace quant

Expected<QuantPairing> PairQuantized(const Model& a, const Model& b,
                                     const std::set<std::string>& hidden_b) {
  QuantPairing out;
  out.format = DetectQuantFormat(b);
  if (out.format == QuantFormat::kNone)
    return InvalidArgument(b.path() + " holds no quantization nodes");
  Ctx cx{a, b, hidden_b, a.index(), b.index(), &out, {}, {}, {}, {}, {}, {}};
  for (const auto& t : cx.ga.tensors()) {  // graph inputs pair by name
    if (t.kind == TensorKind::kGraphInput && cx.gb.Find(t.name) != nullptr) cx.m[t.name] = t.name;
  }
  for (size_t k = 0; k < cx.gb.nodes().size(); ++k) {
    const NodeInfo& n = cx.gb.nodes()[k];
    if (IsQ(n.op_type) || IsDQ(n.op_type)) continue;
    for (size_t s = 0; s < n.inputs.size(); ++s) {
      if (!n.inputs[s].empty())
        cx.readers[Canon(cx.gb, n.inputs[s])].emplace_back(static_cast<int>(k),
                                                           static_cast<int>(s));
    }
  }
  std::vector<std::pair<int, int>> matched;  // (A node, B node)
  for (size_t ia = 0; ia < cx.ga.nodes().size(); ++ia) {
    const NodeInfo& na = cx.ga.nodes()[ia];
    int nb = MatchNode(cx, static_cast<int>(ia));
    if (nb >= 0) {
      cx.used_b.insert(nb);
      matched.emplace_back(static_cast<int>(ia), nb);
      const NodeInfo& n = cx.gb.nodes()[nb];
      for (size_t k = 0; k < na.outputs.size() && k < n.outputs.size(); ++k) {
        if (!na.outputs[k].empty() && !n.outputs[k].empty()) cx.m[na.outputs[k]] = n.outputs[k];
      }
      continue;
    }
    // a Relu/Clip the quantizer folded into the quantization of its input
    if (Foldable(na) && !na.inputs.empty() && !na.outputs.empty() && cx.m.count(na.inputs[0])) {
      const std::string& v = cx.m[na.inputs[0]];
      std::vector<std::string> dq, q;
      Carriers(cx.gb, v, &dq, &q);
      if (!q.empty() || IsQuantizedValue(cx.gb, v)) {
        cx.m[na.outputs[0]] = v;
        cx.folded_into[na.inputs[0]] = na.outputs[0];
        cx.fold_outputs.insert(na.outputs[0]);
      }
    }
  }
  std::map<std::string, std::string> full_rep;  // what the isolation reads (nothing hidden)
  // representatives, in A's topological order (a fold's output overrides its input's claim on
  // the quantized carriers: those hold clipped values)
  std::unordered_map<std::string, std::string> produced_by_layer;
  for (const auto& t : cx.ga.tensors()) {
    if (t.kind == TensorKind::kInitializer || t.kind == TensorKind::kSubgraph) continue;
    auto it = cx.m.find(t.name);
    if (it == cx.m.end()) continue;
    const std::string& v = it->second;
    std::vector<std::string> dq, q;
    Carriers(cx.gb, v, &dq, &q);
    bool pre_fold = cx.folded_into.count(t.name) > 0;
    if (!pre_fold) {
      for (const auto& x : dq) out.a_of_float[x] = t.name;
      for (const auto& x : q) out.a_of_quantized[x] = t.name;
      if (IsQuantizedValue(cx.gb, v)) out.a_of_quantized[v] = t.name;
    }
    if (!IsQuantizedValue(cx.gb, v) && !out.a_of_float.count(v)) out.a_of_float[v] = t.name;
    if (t.kind == TensorKind::kGraphInput) continue;
    auto note_params = [&](const std::string& r) -> Status {
      bool has = false;
      OP_ASSIGN_OR_RETURN(QuantParams p, ParamsOf(b, r, &has));
      if (has) {
        if (IsQuantizedValue(cx.gb, r)) out.dequantize_b.insert(r);
        out.params_b[r] = std::move(p);
      }
      return Status::Ok();
    };
    static const std::set<std::string> kNothingHidden;
    std::string full = Representative(cx, t.name, v, kNothingHidden);
    if (!full.empty()) {
      full_rep[t.name] = full;
      OP_RETURN_IF_ERROR(note_params(full));
    }
    std::string r = Representative(cx, t.name, v, cx.hidden_b);
    if (r.empty()) {
      if (pre_fold) out.folded.push_back(t.name);
      continue;
    }
    out.rename[t.name] = r;
    if (r == t.name || r.rfind(t.name + "_", 0) == 0) ++out.by_name_hint;
    OP_RETURN_IF_ERROR(note_params(r));
  }
  // layers: matched nodes that compute on quantized values
  std::unordered_map<std::string, std::string> fold_of;  // A pre-fold tensor -> fold output
  for (const auto& [x, y] : cx.folded_into) fold_of[x] = y;
  for (const auto& [ia, ib] : matched) {
    const NodeInfo& na = cx.ga.nodes()[ia];
    const NodeInfo& nb = cx.gb.nodes()[ib];
    bool quantized = quant::FindQLinearOp(nb.op_type) != nullptr;
    for (const auto& x : nb.inputs) {
      const NodeInfo* p = x.empty() ? nullptr : Producer(cx.gb, x);
      quantized = quantized || (p != nullptr && IsDQ(p->op_type));
    }
    if (!quantized || na.outputs.empty()) continue;
    std::string ta = na.outputs[0];
    while (fold_of.count(ta)) ta = fold_of[ta];  // Conv -> Relu folded: the layer ends there
    auto r = full_rep.find(ta);
    if (r == full_rep.end()) continue;
    out.layers.push_back({ia, ib, ta, r->second});
    for (size_t i = 0; i < na.inputs.size(); ++i) {
      if (na.inputs[i].empty() || IsActivation(cx, na.inputs[i])) continue;
      auto w = WeightOfB(cx, nb, SlotB(nb, static_cast<int>(i)));
      if (!w.ok() || !w->quantized) continue;
      QuantWeight qw;
      qw.name_a = na.inputs[i];
      qw.name_b = w->name_b;
      qw.node = na.name;
      qw.per_channel = w->params.per_channel();
      qw.axis = w->params.axis;
      out.weights.push_back(qw);
    }
  }
  if (out.rename.empty())
    return InvalidArgument("no tensor of " + a.path() + " pairs with " + b.path() +
                           " through its quantization");
  return out;
}

Status MeasureWeights(const Model& a, const Model& b, std::vector<QuantWeight>* weights) {
  for (QuantWeight& w : *weights) {
    OP_ASSIGN_OR_RETURN(Tensor fa, ConstantTensor(a, w.name_a));
    // the quantized initializer and its parameters, from the node reading it in B
    const GraphIndex& g = b.index();
    const TensorEntry* e = g.Find(w.name_b);
    if (e == nullptr || e->consumers.empty()) continue;
    const NodeInfo& c = g.nodes()[e->consumers[0]];
    int slot =
        static_cast<int>(std::find(c.inputs.begin(), c.inputs.end(), w.name_b) - c.inputs.begin());
    if (slot + 1 >= static_cast<int>(c.inputs.size())) continue;
    OP_ASSIGN_OR_RETURN(
        QuantParams p,
        quant::ReadParams(b, c.inputs[slot + 1],
                          slot + 2 < static_cast<int>(c.inputs.size()) ? c.inputs[slot + 2] : "",
                          w.axis));
    p.axis = w.axis;
    OP_ASSIGN_OR_RETURN(Tensor q, ConstantTensor(b, w.name_b));
    if (IsFloating(q.dtype())) {  // a float weight B quantizes in the graph
      OP_ASSIGN_OR_RETURN(q, Quantize(q, p));
    }
    OP_ASSIGN_OR_RETURN(Tensor fb, Dequantize(q, p));
    if (fa.shape() != fb.shape()) continue;
    const Shape& s = fa.shape();
    int axis = p.per_channel() ? p.axis : -1;
    if (axis < 0 && p.per_channel()) continue;
    int64_t inner = 1, nch = axis >= 0 ? s[axis] : 1;
    for (size_t d = axis + 1; axis >= 0 && d < s.size(); ++d) inner *= s[d];
    std::vector<double> sa(nch, 0), se(nch, 0);
    double ta = 0, te = 0, max_steps = 0;
    for (uint64_t i = 0; i < fa.num_elements(); ++i) {
      int64_t ch = axis >= 0 ? (static_cast<int64_t>(i) / inner) % nch : 0;
      double x = ElementAsDouble(fa, i), y = ElementAsDouble(fb, i), d = (y - x) * (y - x);
      sa[ch] += x * x, se[ch] += d, ta += x * x, te += d;
      double sc = p.scale[p.per_channel() ? ch : 0];
      if (sc > 0) max_steps = std::max(max_steps, std::fabs(y - x) / sc);
    }
    auto db = [](double s, double n) {
      return n == 0 ? std::numeric_limits<double>::infinity() : 10.0 * std::log10(s / n);
    };
    w.sqnr_db = db(ta, te);
    w.max_steps = max_steps;
    if (axis >= 0) {
      w.channel_sqnr_db.clear();
      for (int64_t c2 = 0; c2 < nch; ++c2) w.channel_sqnr_db.push_back(db(sa[c2], se[c2]));
    }
  }
  return Status::Ok();
}

}  // namespace onnxprobe
