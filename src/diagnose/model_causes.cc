// Causes in the models themselves: the culprit's nodes read other attributes or weights on the
// two sides (a diff of the two model files), with the command that restores side A's.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include "diagnose/causes.h"
#include "onnxprobe/format.h"

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
DiagnosisFix RestoreFix(const Ctx& cx, const std::string& what, const std::string& edit) {
  DiagnosisFix fix;
  std::string out = RestoredPath(cx.in.b.path);
  // builds on an earlier fix's output when that is newer than side B's model, so the commands
  // of several findings run one after the other restore them all
  std::string script = "import onnx, os; p = " + Py(out) + "; q = " + Py(cx.in.b.path) +
                       "; a = onnx.load(" + Py(cx.in.a.path) +
                       "); b = onnx.load(p if os.path.exists(p) and os.path.getmtime(p) > "
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
    if (mb == nullptr || n.index_b < 0) continue;
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

// Side B computes the culprit in float16 (its output is float16) and side A's values of the
// node's inputs or output pass float16's largest finite value: they overflow to Inf there.
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
    Tried(tried, "side A's values stay within float16's range");
    return;
  }
  Finding f;
  f.node = c.data.node;
  f.op_type = c.culprit != nullptr ? c.culprit->op_type : "";
  f.tensor = c.data.tensor;
  f.cause = Cause::kFloat16Range;
  f.certainty = Certainty::kConfirmed;  // the node alone, fed A's values, makes the error
  f.summary =
      "float16 overflow: side B computes the node in float16 and its values pass "
      "float16's largest finite value, 65504";
  f.evidence = "side A's " + where +
               (std::isfinite(top) ? " reaches " + FormatNumber(top) + " (|x| > 65504)"
                                   : " passes 65504 (it is Inf once rounded to float16)") +
               "; run alone with side A's inputs rounded to float16, the node differs from side "
               "A by " +
               FormatNumber(c.error);
  // the node and every node reading its output (which receives the overflowing values) stay in
  // float32; Casts only move values between precisions
  f.fix.keep_float_nodes = {c.data.node};
  const Model* mb = cx.in.b.model;
  const TensorEntry* t = mb != nullptr ? mb->index().Find(c.data.output) : nullptr;
  if (t != nullptr) {
    for (int k : t->consumers) {
      const NodeInfo& n = mb->index().nodes()[k];
      if (n.op_type != "Cast" && !Contains(f.fix.keep_float_nodes, n.name))
        f.fix.keep_float_nodes.push_back(n.name);
    }
  }
  std::string keep;
  for (const auto& n : f.fix.keep_float_nodes) keep += (keep.empty() ? "" : ",") + n;
  f.fix.summary = "keep " + keep +
                  " in float32 (the float16 conversion's block list: "
                  "onnxconverter-common node_block_list, onnxprobe fp16 --keep-fp32 " +
                  keep + ")";
  found->push_back(std::move(f));
}

}  // namespace

void ModelCauses(Ctx& cx, const Culprit1& c, std::vector<Finding>* found, std::string* tried) {
  Float16Range(cx, c, found, tried);
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
  for (const InitializerDiff& w : d->initializers) {
    if (w.kind != DiffKind::kChanged) continue;
    bool read = false;
    for (const auto& r : w.readers) read = read || Contains(nodes, r);
    if (!read) continue;
    Finding f;
    f.node = c.data.node;
    f.op_type = c.culprit != nullptr ? c.culprit->op_type : "";
    f.tensor = c.data.tensor;
    f.cause = Cause::kWeightChanged;
    f.certainty = sure;
    std::string what = "initializer " + w.name_b;
    if (w.compared) {
      what += ": " + std::to_string(w.num_different) + " of " + std::to_string(w.num_elements) +
              " values differ, largest |a-b| " + FormatNumber(w.max_abs_diff);
    } else {
      what += ": dtype or shape differs";
    }
    f.summary = "a weight the node computes with differs between the two models (" + w.name_b + ")";
    f.evidence = "model diff: " + what + AloneDiffers(c);
    std::string edit = "s = [t for t in a.graph.initializer if t.name == " + Py(w.name_a) +
                       "][0]; t = [t for t in b.graph.initializer if t.name == " + Py(w.name_b) +
                       "][0]; t.CopyFrom(s); t.name = " + Py(w.name_b);
    f.fix = RestoreFix(cx, "initializer " + w.name_b, edit);
    found->push_back(std::move(f));
  }
  AddedNodes(cx, c, nodes, sure, found);
  if (found->size() == before) Tried(tried, "the two models do not differ at its nodes");
}

}  // namespace onnxprobe::diagnose
