// Causes in the models themselves: the culprit's nodes read other attributes or weights on the
// two sides (a diff of the two model files), with the command that restores side A's.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>

#include "diagnose/causes.h"
#include "onnxprobe/common/format.h"
#include "onnxprobe/graph/graph.h"

namespace onnxprobe::diagnose {
namespace {

// A Python string literal.
std::string Py(const std::string& s) {
  std::string out = "\"";
  for (unsigned char ch : s) {
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += static_cast<char>(ch);
    } else if (ch < 0x20 || ch == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", ch);
      out += buf;
    } else {
      out += static_cast<char>(ch);
    }
  }
  return out + "\"";
}

// Side B's model path with `.restored` before its extension, beside it.
std::string RestoredPath(const std::string& b) {
  std::filesystem::path p(b);
  return (p.parent_path() / (p.stem().string() + ".restored.onnx")).string();
}

// python3 -c '...': loads both models, applies `edit` to B, saves it under RestoredPath.
DiagnosisFix RestoreFix(const Ctx& cx, const std::string& what, const std::string& edit,
                        bool reads_a = true) {
  DiagnosisFix fix;
  std::string out = RestoredPath(cx.in.b.path);
  // builds on an earlier fix's output when that is newer than side B's model, so the commands
  // of several findings run one after the other restore them all
  std::string script = "import onnx, os; p = " + Py(out) + "; q = " + Py(cx.in.b.path) +
                       (reads_a ? "; a = onnx.load(" + Py(cx.in.a.path) + ")" : "") +
                       "; b = onnx.load(p if os.path.exists(p) and os.path.getmtime(p) > "
                       "os.path.getmtime(q) else q); " +
                       edit + "; onnx.save(b, p)";
  fix.summary = "restore side A's " + what + " in side B's model (written beside it as " + out +
                ", or updated there when an earlier fix wrote it; compare with it as side B), "
                "unless the change is intended";
  fix.command = ShellJoin({"python3", "-c", script});
  fix.side_b = out;
  return fix;
}

// The isolated run's part of the evidence.
std::string AloneDiffers(const Culprit1& c) {
  return "; run alone with side A's exact inputs, the node differs from side A by " +
         FormatNumber(c.error);
}

bool Contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Nodes only side B's model has, run in the culprit: the fix bypasses them (each reads one
// tensor and makes one, so its readers read what it read, as in side A's graph).
void AddedNodes(const Ctx& cx, const Culprit1& c, const std::vector<std::string>& nodes,
                Certainty sure, std::vector<Finding>* found) {
  const Model* mb = cx.in.b.model;
  std::vector<std::string> added;
  std::string what;
  bool passes_through = mb != nullptr;
  for (const NodeDiff& n : cx.in.diff->nodes) {
    if (n.kind != DiffKind::kAdded || !Contains(nodes, n.name_b)) continue;
    added.push_back(n.name_b);
    what += (what.empty() ? "" : ", ") + n.name_b + " (" + n.op_b + ")";
    // the diff indexes the file's graph; side B may run it with If nodes inlined
    if (mb == nullptr || n.index_b < 0 || size_t(n.index_b) >= mb->index().nodes().size() ||
        mb->index().nodes()[n.index_b].name != n.name_b)
      continue;
    const NodeInfo& info = mb->index().nodes()[n.index_b];
    size_t reads = 0;
    for (const auto& x : info.inputs) reads += x.empty() ? 0 : 1;
    passes_through = passes_through && reads == 1 && info.outputs.size() == 1;
  }
  if (added.empty()) return;
  Finding f;
  f.node = added.front();
  f.op_type = c.culprit != nullptr ? c.culprit->op_type : "";
  f.tensor = c.data.tensor;
  f.cause = Cause::kNodesAdded;
  f.certainty = sure;
  f.summary = "side B's model runs nodes side A's does not have: " + what;
  f.evidence = "model diff: added in B: " + what +
               "; run alone with side A's exact inputs, they "
               "differ from side A by " +
               FormatNumber(c.error);
  if (!passes_through) {
    f.fix.summary = "remove the nodes side B's model adds (" + what + "), unless they are intended";
  } else {
    std::string list;
    for (const auto& n : added) list += (list.empty() ? "" : ", ") + Py(n);
    std::string edit =
        "drop = {" + list +
        "}; src = {n.output[0]: [x for x in n.input if x][0] for n in "
        "b.graph.node if n.name in drop}; r = lambda x: r(src[x]) if x in src else x; "
        "[n.input.__setitem__(i, r(x)) for n in b.graph.node if n.name not in drop for i, x in "
        "enumerate(list(n.input))]; [b.graph.node.remove(n) for n in [n for n in b.graph.node "
        "if n.name in drop]]";
    f.fix = RestoreFix(cx, "graph (the nodes side B adds bypassed)", edit);
  }
  found->push_back(std::move(f));
}

// The largest finite |value| of `t` (0 for an empty or non-float tensor).
double MaxFinite(const Tensor& t) {
  double m = 0;
  for (uint64_t i = 0; i < t.num_elements(); ++i) {
    double v = std::fabs(ElementAsDouble(t, i));
    if (std::isfinite(v)) m = std::max(m, v);
  }
  return m;
}

// The fix's summary for its keep_float_nodes.
void KeepListSummary(Finding* f) {
  std::string keep;
  for (const auto& n : f->fix.keep_float_nodes) keep += (keep.empty() ? "" : ",") + n;
  f->fix.summary = "keep " + keep +
                   " in float32 (the float16 conversion's block list: "
                   "onnxconverter-common node_block_list, onnxprobe fp16 --keep-fp32 " +
                   keep + ")";
}

// The float16 conversion's block list that keeps the culprit and every node reading its output
// (which receives the out-of-range values) in float32; Casts only move values between precisions.
void KeepInFloat32(const Ctx& cx, const Culprit1& c, Finding* f) {
  f->fix.keep_float_nodes = {c.data.node};
  const Model* mb = cx.in.b.model;
  const TensorEntry* t = mb != nullptr ? mb->index().Find(c.data.output) : nullptr;
  if (t != nullptr) {
    for (int k : t->consumers) {
      const NodeInfo& n = mb->index().nodes()[k];
      if (n.op_type != "Cast" && !Contains(f->fix.keep_float_nodes, n.name))
        f->fix.keep_float_nodes.push_back(n.name);
    }
  }
  KeepListSummary(f);
}

Finding Float16Finding(const Ctx& cx, const Culprit1& c) {
  Finding f;
  f.node = c.data.node;
  f.op_type = c.culprit != nullptr ? c.culprit->op_type : "";
  f.tensor = c.data.tensor;
  f.cause = Cause::kFloat16Range;
  f.certainty = Certainty::kConfirmed;  // the node alone, fed A's values, makes the error
  KeepInFloat32(cx, c, &f);
  return f;
}

// Below float16's smallest normal value (2^-14) its precision falls from 11 significant bits to
// fewer (a fixed step of 2^-24), and below half that step values become 0. The comparison
// accepts a float16 tensor within float16's representation of side A's values, so underflow
// shows where a node amplifies such values.
constexpr double kMinNormal16 = 6.103515625e-05;  // 2^-14

// Side B's tensor name -> side A's largest |value| (the comparison's rows).
using Scales = std::map<std::string, double>;
Scales AScales(const Ctx& cx) {
  Scales scale;
  if (cx.in.comparison != nullptr) {
    for (const auto& r : cx.in.comparison->rows)
      scale[r.name_b.empty() ? r.name : r.name_b] = r.metrics.scale;
  }
  return scale;
}

// The float16 nodes of side B around `seed`, a tensor whose side A values lie wholly below 2^-14:
// upstream, its writer and the writers of their inputs that are wholly below 2^-14 too; downstream,
// its readers and, while their outputs stay wholly below 2^-14, theirs. "Wholly below" reads
// `scale` (side A's largest |a|). Casts end a walk: there a value changes precision. Graph order.
std::vector<std::string> SubnormalChain(const Ctx& cx, const Scales& scale,
                                        const std::string& seed) {
  const Model* mb = cx.in.b.model;
  if (mb == nullptr) return {};
  auto subnormal = [&](const std::string& name) {
    auto it = scale.find(name);
    const TensorEntry* e = mb->index().Find(name);
    return it != scale.end() && it->second > 0 && it->second < kMinNormal16 && e != nullptr &&
           e->kind == TensorKind::kIntermediate;
  };
  const auto& nodes = mb->index().nodes();
  std::vector<int> found;
  auto add = [&](int k) {
    if (k < 0 || nodes[k].op_type == "Cast" ||
        std::find(found.begin(), found.end(), k) != found.end())
      return false;
    found.push_back(k);
    return true;
  };
  std::vector<std::string> up = {seed}, down = {seed};
  while (!up.empty() && found.size() < 64) {
    const TensorEntry* t = mb->index().Find(up.back());
    up.pop_back();
    if (t == nullptr || !add(t->producer)) continue;
    for (const auto& in : nodes[t->producer].inputs)
      if (subnormal(in)) up.push_back(in);
  }
  while (!down.empty() && found.size() < 64) {
    const TensorEntry* t = mb->index().Find(down.back());
    down.pop_back();
    if (t == nullptr) continue;
    for (int k : t->consumers) {
      if (!add(k)) continue;
      for (const auto& out : nodes[k].outputs)
        if (subnormal(out)) down.push_back(out);
    }
  }
  std::sort(found.begin(), found.end(),
            [&](int x, int y) { return nodes[x].topo_index < nodes[y].topo_index; });
  std::vector<std::string> names;
  for (int k : found) names.push_back(nodes[k].name);
  return names;
}

// The nonzero finite values of `t` and how many lie below 2^-14.
std::pair<uint64_t, uint64_t> SubnormalShare(const Tensor& t) {
  uint64_t tiny = 0, nonzero = 0;
  for (uint64_t i = 0; i < t.num_elements(); ++i) {
    double x = std::fabs(ElementAsDouble(t, i));
    if (x == 0 || !std::isfinite(x)) continue;
    ++nonzero;
    tiny += x < kMinNormal16;
  }
  return {tiny, nonzero};
}

// Float16 underflow, likely: the node alone was fed side A's values rounded to float16 (its
// exact ones cannot be fed in float16), so that the lost bits make the failure is inferred.
// - its output: side A's values lie wholly below 2^-14 (float16 holds them in steps of 6e-8)
//   and the error, below tolerance there, is amplified downstream;
// - else an input fed in float16 whose side A values (the comparison's row: largest |a|) lie
//   wholly below 2^-14: they lost bits, or became 0, before the node, which amplifies them, read
//   them. A few small values among normal ones are float16's ordinary rounding, not underflow.
// The fix keeps the chain of subnormal tensors' writers and readers in float32.
bool Float16Underflow(const Ctx& cx, const Culprit1& c, std::vector<Finding>* found) {
  std::string where;
  uint64_t tiny_most = 0, of = 0, zeros = 0;
  bool output = false;
  double top = MaxFinite(c.data.expected);
  if (top > 0 && top < kMinNormal16) {
    auto [tiny, nonzero] = SubnormalShare(c.data.expected);
    where = c.data.output, tiny_most = tiny, of = nonzero, output = true;
  }
  Scales scale = AScales(cx);
  for (const auto& in : c.data.inputs) {
    if (output || in.tensor.dtype() != DType::kFloat16) continue;
    auto a = scale.find(in.name);
    if (a == scale.end() || !(a->second > 0 && a->second < kMinNormal16)) continue;
    auto [tiny, nonzero] = SubnormalShare(in.tensor);
    if (where.empty() || tiny > tiny_most) {
      tiny_most = tiny, of = nonzero, where = in.name;
      zeros = in.tensor.num_elements() - nonzero;
      top = a->second;
    }
  }
  if (where.empty()) return false;
  Finding f = Float16Finding(cx, c);
  f.certainty = Certainty::kLikely;
  f.fix.keep_float_nodes = SubnormalChain(cx, scale, where);
  if (!Contains(f.fix.keep_float_nodes, c.data.node)) f.fix.keep_float_nodes.push_back(c.data.node);
  KeepListSummary(&f);
  std::string what = output ? "output " + c.data.tensor : "input " + where;
  f.summary = "float16 underflow: side B holds the node's " + what +
              " in float16 and its values fall below float16's smallest normal value, 6.1e-5, "
              "where it keeps fewer significant bits";
  f.evidence = output ? std::to_string(tiny_most) + " of the " + std::to_string(of) +
                            " nonzero values of " + what + " (side A's, largest " +
                            FormatNumber(top) + ") lie below 6.1e-5 (precision under 11 bits)"
                      : "side A's values of " + what + " all lie below 6.1e-5 (largest " +
                            FormatNumber(top) + "); fed to the node in float16, " +
                            std::to_string(tiny_most) + " are subnormal and " +
                            std::to_string(zeros) + " are 0";
  f.evidence +=
      "; run alone with side A's inputs rounded to float16, the node differs from side A "
      "by " +
      FormatNumber(c.error) +
      (output ? ", below tolerance there and amplified by the nodes reading it" : "");
  found->push_back(std::move(f));
  return true;
}

// Side B computes the culprit in float16 (its output is float16) and side A's values of the
// node's inputs or output pass float16's largest finite value (they overflow to Inf there) or
// fall into its subnormal range (they lose precision or become 0).
void Float16Range(const Ctx& cx, const Culprit1& c, std::vector<Finding>* found,
                  std::string* tried) {
  constexpr double kFloat16Max = 65504.0;
  if (c.data.observed.dtype() != DType::kFloat16) return;
  std::string where;
  double top = 0;
  auto look = [&](const std::string& name, const Tensor& t) {
    double m = MaxFinite(t);
    // an input fed as float16 holds side A's values rounded to it: past 65504 they became Inf
    if (t.dtype() == DType::kFloat16 && ComputeStats(t).inf_count > 0) m = INFINITY;
    if (m > kFloat16Max && m > top) top = m, where = name;
  };
  for (const auto& in : c.data.inputs) look(in.name, in.tensor);
  look(c.data.tensor, c.data.expected);
  if (where.empty()) {
    if (!Float16Underflow(cx, c, found))
      Tried(tried, "side A's values stay within float16's range");
    return;
  }
  Finding f = Float16Finding(cx, c);
  f.summary =
      "float16 overflow: side B computes the node in float16 and its values pass "
      "float16's largest finite value, 65504";
  f.evidence = "side A's " + where +
               (std::isfinite(top) ? " reaches " + FormatNumber(top) + " (|x| > 65504)"
                                   : " passes 65504 (it is Inf once rounded to float16)") +
               "; run alone with side A's inputs rounded to float16, the node differs from side "
               "A by " +
               FormatNumber(c.error);
  found->push_back(std::move(f));
}

}  // namespace

// Python for the TensorProto holding a weight of model `m`: an initializer, or the value of the
// Constant node whose output it is.
std::string WeightExpr(const std::string& m, const std::string& name, bool constant) {
  // G (defined by kGraphsPy) lists a graph and every subgraph: a weight may sit in an If's
  // branch, which the comparison ran inlined
  if (!constant)
    return "[t for g in G(" + m + ".graph) for t in g.initializer if t.name == " + Py(name) +
           "][0]";
  return "[x.t for g in G(" + m + ".graph) for n in g.node if n.op_type == 'Constant' and " +
         "list(n.output) == [" + Py(name) + "] for x in n.attribute if x.name == 'value'][0]";
}

// A graph and its subgraphs (If branches, Loop and Scan bodies), depth first.
constexpr const char* kGraphsPy =
    "G = lambda g: [g] + [h for n in g.node for x in n.attribute for s in "
    "(([x.g] if x.HasField('g') else []) + list(x.graphs)) for h in G(s)]";

// Localization found one constant of the culprit's nodes whose fitted value reproduces side A
// (Culprit::fit): the finding, and a command that writes side B's model with that value.
void ConstantFitted(const Ctx& cx, const Culprit1& c, std::vector<Finding>* found) {
  if (c.culprit == nullptr || c.culprit->fit.node.empty()) return;
  const ConstantFit& fit = c.culprit->fit;
  char fitted[32], exact[40];
  std::snprintf(fitted, sizeof fitted, "%.9g", fit.fitted);
  std::snprintf(exact, sizeof exact, "%.17g", fit.fitted);  // a float64 constant keeps it all
  Finding f;
  f.node = fit.node;
  f.op_type = fit.op_type;
  f.tensor = c.data.tensor;
  f.cause = Cause::kConstantFitted;
  f.certainty = Certainty::kConfirmed;
  f.summary = "the " + fit.constant + " of node " + fit.node + " is " + FormatNumber(fit.value, 6) +
              "; side A's values need " + FormatNumber(fit.fitted, 6);
  f.evidence =
      "the culprit's nodes run alone with side A's inputs reproduce side A's value within "
      "tolerance with it set to " +
      std::string(fitted) + ", and with no other constant of theirs changed alone" +
      AloneDiffers(c);
  const std::string attr = "attribute ";
  std::string edit;
  if (fit.constant.compare(0, attr.size(), attr) == 0) {
    edit = "[setattr(x, \"f\", " + std::string(exact) +
           ") for n in b.graph.node if n.name == " + Py(fit.node) +
           " for x in n.attribute if x.name == " + Py(fit.constant.substr(attr.size())) + "]";
  } else {
    // input 'NAME': a Constant node's value or an initializer, one element
    std::string name = fit.constant.substr(fit.constant.find('\'') + 1);
    name = name.substr(0, name.rfind('\''));
    edit = "import numpy as np; from onnx import numpy_helper as nh; v = " + std::string(exact) +
           "; t = lambda x, nm: nh.from_array(np.full(nh.to_array(x).shape, v, "
           "nh.to_array(x).dtype), nm); [x.t.CopyFrom(t(x.t, x.t.name)) for n in b.graph.node if "
           "n.op_type == \"Constant\" and list(n.output) == [" +
           Py(name) +
           "] for x in n.attribute if x.name == \"value\"]; [i.CopyFrom(t(i, i.name)) for i in "
           "b.graph.initializer if i.name == " +
           Py(name) + "]";
  }
  // an attribute is found by its node's name: an unnamed node ("Op#k") gets no command
  const Model* mb = cx.in.b.model;
  bool named = false;
  for (size_t k = 0; mb != nullptr && k < mb->index().nodes().size(); ++k)
    named = named || mb->index().nodes()[k].name == fit.node;
  if (named || fit.constant.compare(0, attr.size(), attr) != 0) {
    f.fix =
        RestoreFix(cx, fit.constant + " of node " + fit.node + " as the fit found it", edit, false);
    f.fix.summary = "set it to " + std::string(fitted) + " (or the value the source means) " +
                    f.fix.summary.substr(f.fix.summary.find("in side B"));
  } else {
    f.fix.summary = "set it to " + std::string(fitted) + " (or the value the source means)";
  }
  found->push_back(std::move(f));
}

// A's node named like side B's culprit, when it is a Conv whose output only a
// BatchNormalization side B does not have reads: the refolding finding, and the Conv's name;
// "" otherwise.
std::string FoldedBatchNorm(const Ctx& cx, const Culprit1& c, std::vector<Finding>* found) {
  const Model* ma = cx.in.a.model;
  const Model* mb = cx.in.b.model;
  if (ma == nullptr || mb == nullptr) return "";
  const NodeInfo* conv = nullptr;
  for (const auto& n : ma->index().nodes()) {
    if (n.name == c.data.node && n.op_type == "Conv" && n.outputs.size() == 1) conv = &n;
  }
  if (conv == nullptr || conv->inputs.size() < 2) return "";
  const TensorEntry* out = ma->index().Find(conv->outputs[0]);
  if (out == nullptr || out->consumers.size() != 1) return "";
  const NodeInfo& bn = ma->index().nodes()[out->consumers[0]];
  if (bn.op_type != "BatchNormalization" || bn.inputs.size() < 5) return "";
  for (const auto& n : mb->index().nodes()) {
    if (n.name == bn.name) return "";  // side B kept it: no fold
  }
  const NodeInfo* conv_b = nullptr;
  for (const auto& n : mb->index().nodes()) {
    if (n.name == conv->name && n.op_type == "Conv" && n.inputs.size() >= 3) conv_b = &n;
  }
  if (conv_b == nullptr) return "";
  Finding f;
  f.node = conv->name;
  f.op_type = "Conv";
  f.tensor = c.data.tensor;
  f.cause = Cause::kWeightChanged;
  f.certainty = Certainty::kLikely;
  f.summary = "side B's Conv " + conv->name + " holds side A's Conv and BatchNormalization " +
              bn.name + " folded together, and the folded weights differ from what folding side " +
              "A's gives";
  f.evidence = "side A's " + conv->name + " output is read only by " + bn.name +
               ", which side B does not have; side B's " + conv->name +
               " reads its own weight and bias" + AloneDiffers(c);
  // W' = W * g / sqrt(v + eps) per output channel, b' = (b - m) * g / sqrt(v + eps) + beta, in
  // float64, rounded once to the weights' type
  std::string eps = "1e-05";
  for (const auto& [name, v] : NodeFloatAttributes(*ma, bn)) {
    if (name == "epsilon") {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.9g", v);
      eps = buf;
    }
  }
  auto arr = [](const std::string& m, const std::string& name) {
    return "nh.to_array([t for t in " + m + ".graph.initializer if t.name == " + Py(name) +
           "][0]).astype(np.float64)";
  };
  std::string bias_a =
      conv->inputs.size() >= 3 && !conv->inputs[2].empty() ? arr("a", conv->inputs[2]) : "0.0";
  std::string edit =
      "import numpy as np; from onnx import numpy_helper as nh; w = " + arr("a", conv->inputs[1]) +
      "; bias = " + bias_a + "; g = " + arr("a", bn.inputs[1]) +
      "; beta = " + arr("a", bn.inputs[2]) + "; m = " + arr("a", bn.inputs[3]) +
      "; v = " + arr("a", bn.inputs[4]) + "; k = g / np.sqrt(v + " + eps +
      "); W = w * k.reshape((-1,) + (1,) * (w.ndim - 1)); B = (bias - m) * k + beta; "
      "[t.CopyFrom(nh.from_array(X.astype(nh.to_array(t).dtype), t.name)) for t in "
      "b.graph.initializer for nm, X in ((" +
      Py(conv_b->inputs[1]) + ", W), (" + Py(conv_b->inputs[2]) + ", B)) if t.name == nm]";
  f.fix =
      RestoreFix(cx, "Conv " + conv->name + " folded anew from side A's Conv and " + bn.name, edit);
  found->push_back(std::move(f));
  return conv->name;
}

void ModelCauses(Ctx& cx, const Culprit1& c, std::vector<Finding>* found, std::string* tried) {
  Float16Range(cx, c, found, tried);
  ConstantFitted(cx, c, found);
  const ModelDiff* d = cx.in.diff;
  if (d == nullptr) return;
  std::vector<std::string> nodes = {c.data.node};
  if (c.culprit != nullptr)
    nodes.insert(nodes.end(), c.culprit->nodes.begin(), c.culprit->nodes.end());
  // the nodes run alone were fed side A's exact values: on one runtime with one set of
  // settings, what they compute with (attributes, weights) is all that differs
  const DiagnoseSide &a = cx.in.a, &b = cx.in.b;
  bool same_runtime = a.ort_library == b.ort_library && a.session.provider == b.session.provider &&
                      a.session.optimization_level == b.session.optimization_level;
  Certainty sure = same_runtime ? Certainty::kConfirmed : Certainty::kLikely;
  size_t before = found->size();
  for (const NodeDiff& n : d->nodes) {
    if (n.kind != DiffKind::kChanged || !Contains(nodes, n.name_b)) continue;
    if (n.attributes.empty() && !n.op_changed) continue;
    Finding f;
    f.node = n.name_b;
    f.op_type = n.op_b;
    f.tensor = c.data.tensor;
    f.cause = Cause::kAttributeChanged;
    f.certainty = sure;
    std::string what;
    if (n.op_changed) what = "op " + n.op_a + " in A, " + n.op_b + " in B";
    for (const auto& at : n.attributes) {
      what += (what.empty() ? "" : "; ") + at.name + ": " + (at.a.empty() ? "absent" : at.a) +
              " in A, " + (at.b.empty() ? "absent" : at.b) + " in B";
    }
    f.summary = "node " + n.name_b + " is configured differently in the two models (" + what + ")";
    f.evidence = "model diff: " + what + AloneDiffers(c);
    std::string edit = "s = [n for n in a.graph.node if n.name == " + Py(n.name_a) +
                       "][0]; t = [n for n in b.graph.node if n.name == " + Py(n.name_b) +
                       "][0]; del t.attribute[:]; t.attribute.extend(s.attribute)";
    if (n.op_changed) edit += "; t.op_type = s.op_type; t.domain = s.domain";
    f.fix = RestoreFix(cx, "attributes of node " + n.name_b, edit);
    found->push_back(std::move(f));
  }
  // side B's Conv holds side A's Conv and the BatchNormalization after it folded (onnxsim,
  // onnxslim): its weights differ from A's by the fold itself, and restoring A's would drop the
  // normalization. The finding is the fold, the fix refolds A's Conv and BatchNormalization.
  std::string folded_conv = FoldedBatchNorm(cx, c, found);
  for (const InitializerDiff& w : d->initializers) {
    if (w.kind != DiffKind::kChanged) continue;
    if (w.compared && w.num_different == 0) continue;  // only converted (float32 -> float16)
    bool read = false;
    for (const auto& r : w.readers) read = read || Contains(nodes, r);
    if (!read) continue;
    if (!folded_conv.empty() && Contains(w.readers, folded_conv)) continue;
    Finding f;
    f.node = c.data.node;
    f.op_type = c.culprit != nullptr ? c.culprit->op_type : "";
    f.tensor = c.data.tensor;
    f.cause = Cause::kWeightChanged;
    f.certainty = sure;
    const std::string weight =
        w.constant_b.empty()
            ? "initializer " + w.name_b
            : "weight " + w.name_b + " (held by Constant node " + w.constant_b + ")";
    std::string what = weight;
    if (w.name_a != w.name_b) what += " (" + w.name_a + " in A)";
    if (w.compared) {
      what += ": " + std::to_string(w.num_different) + " of " + std::to_string(w.num_elements) +
              " values differ, largest |a-b| " + FormatNumber(w.max_abs_diff);
    } else {
      what += ": dtype or shape differs";
    }
    f.summary = "a weight the node computes with differs between the two models (" + w.name_b + ")";
    f.evidence = "model diff: " + what + AloneDiffers(c);
    std::string edit = std::string(kGraphsPy) +
                       "; s = " + WeightExpr("a", w.name_a, !w.constant_a.empty()) +
                       "; t = " + WeightExpr("b", w.name_b, !w.constant_b.empty()) +
                       "; t.CopyFrom(s); t.name = " + Py(w.constant_b.empty() ? w.name_b : "");
    f.fix = RestoreFix(cx, weight, edit);
    found->push_back(std::move(f));
  }
  AddedNodes(cx, c, nodes, sure, found);
  if (found->size() == before) Tried(tried, "the two models do not differ at its nodes");
}

}  // namespace onnxprobe::diagnose
