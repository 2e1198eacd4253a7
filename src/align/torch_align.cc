// AlignTorchCapture: structural plans, evidence, BatchNorm folding, then an advisory value search
// for what structure left unaligned.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "align/call_graph.h"
#include "align/evidence.h"
#include "align/finalize.h"
#include "align/functional.h"
#include "align/plan.h"
#include "align/torch_calls.h"
#include "onnxprobe/align/align.h"

namespace onnxprobe {
namespace align {
namespace {

bool IsConvolution(const std::string& op) { return op == "Conv" || op == "ConvTranspose"; }

// Why call c's output was never made whole in the ONNX graph: a node outside every call owning
// one of c's parameters reads it (`read_by`: parameter -> such a node, from
// CallGraph::ForeignParameter); "" when none does.
std::string ReadOutside(const TorchCalls& calls,
                        const std::unordered_map<std::string, std::string>& read_by, int c) {
  for (const auto& names : calls.calls[c].params) {
    for (const auto& p : names) {
      auto it = read_by.find(p);
      if (it != read_by.end())
        return "its parameter '" + p + "' is read by node " + it->second +
               " outside it (a fusion moved part of the module out of its scope): its output "
               "has no counterpart";
    }
  }
  return "";
}

// Whether a BatchNorm module reads tensor t, or its call's caller runs a batch_norm function.
bool BatchNormReads(const TorchCalls& calls, const TorchTensorMeta& t) {
  for (const auto& c : calls.calls) {
    if (!c.batchnorm) continue;
    for (const auto& r : c.inputs) {
      if (r.kind == TorchRef::Kind::kTensor && r.name == t.name) return true;
    }
  }
  const int caller = calls.calls[t.call].parent;
  for (const auto& f : calls.functional) {
    if (f.function == "batch_norm" && (f.call == caller || f.call == t.call)) return true;
  }
  return false;
}

}  // namespace

Alignment Finalize(const TorchCalls& calls, const CallGraph& graph, const Model& model,
                   const std::vector<Plan>& plans, std::vector<bool>* value_eligible) {
  const GraphIndex& g = model.index();
  const auto& ts = calls.tensors;
  const size_t n = ts.size();
  std::vector<std::string> pair(n), note(n);
  std::vector<AlignMethod> method(n, AlignMethod::kNone);
  std::vector<double> confidence(n, 0);
  std::vector<int> root(n);
  value_eligible->assign(n, true);
  for (size_t i = 0; i < n; ++i) {
    const Plan& p = plans[i];
    note[i] = p.note;
    root[i] = static_cast<int>(i);
    if (p.alias >= 0) {
      pair[i] = pair[p.alias];
      confidence[i] = confidence[p.alias];
      if (p.fold_of < 0) root[i] = root[p.alias];
      if (pair[i].empty() && note[i].find("no counterpart") == std::string::npos)
        note[i] += ", which has no counterpart";
    } else if (!p.alias_input.empty()) {
      pair[i] = p.alias_input;
      confidence[i] = 1;
    } else {
      pair[i] = p.chosen;
      confidence[i] = p.confidence;
    }
    method[i] = pair[i].empty() ? AlignMethod::kNone : p.method;
    if (p.alias >= 0 && pair[i].empty()) (*value_eligible)[i] = false;  // follows its target
  }
  // the node making t's values: through Identity nodes a graph tool inserted after it
  auto producer_op = [&](const std::string& t) -> const NodeInfo* {
    const NodeInfo* prod = nullptr;
    std::string x = t;
    for (int hops = 0; hops < 8; ++hops) {
      const TensorEntry* e = g.Find(x);
      if (e == nullptr || e->producer < 0) break;
      prod = &g.nodes()[e->producer];
      if (prod->op_type != "Identity" || prod->inputs.empty()) break;
      x = prod->inputs[0];
    }
    return prod;
  };
  auto unpair = [&](size_t s, const std::string& why) {
    pair[s].clear();
    method[s] = AlignMethod::kNone;
    confidence[s] = 0;
    note[s] = why;
    (*value_eligible)[s] = false;
  };
  // folded BatchNorm: the tensor it normalized lost its counterpart to it
  for (size_t i = 0; i < n; ++i) {
    int u = plans[i].fold_of;
    if (u < 0 || pair[u].empty()) continue;
    const std::string x = pair[u];
    const NodeInfo* prod = producer_op(x);
    const std::string& bn = calls.calls[ts[i].call].module;
    if (prod != nullptr && IsConvolution(prod->op_type)) {
      for (size_t s = 0; s < n; ++s) {
        if (s != i && pair[s] == x && root[s] == root[u])
          unpair(s, "fused with " + bn + ": the pre-BatchNorm activation has no ONNX counterpart");
      }
    } else if (plans[i].alias == u) {
      for (size_t s = i; s < n; ++s) {
        if (root[s] == static_cast<int>(i))
          unpair(s, "a BatchNorm without ONNX nodes after something other than a convolution");
      }
    }
  }
  // a convolution whose weights the exporter rewrote (a BatchNorm folded into it, possibly a
  // functional one): its own output has no counterpart
  for (size_t i = 0; i < n; ++i) {
    const Plan& p = plans[i];
    if (pair[i].empty() || p.alias >= 0 || !p.alias_input.empty()) continue;
    const TorchCall& call = calls.calls[ts[i].call];
    if (call.params.empty() && calls.dataflow) continue;
    const NodeInfo* prod = producer_op(pair[i]);
    if (prod == nullptr || !IsConvolution(prod->op_type) || prod->inputs.size() < 2) continue;
    if (!graph.IsAncestorOrSelf(ts[i].call, graph.owner(prod->topo_index))) continue;
    // the weight, or the shared initializer an Identity copies (identical folded weights, e.g.
    // every convolution before a BatchNorm whose scale is zero, are stored once)
    const std::string weight = g.InitializerBehind(prod->inputs[1]);
    if (weight.empty()) continue;
    bool own = false;
    for (const auto& names : call.params)
      own = own || std::find(names.begin(), names.end(), weight) != names.end();
    // captures without parameter names: a module's parameters are named under its path
    if (!calls.dataflow) own = weight.compare(0, call.module.size() + 1, call.module + ".") == 0;
    if (own) continue;
    // renamed without a BatchNorm after it in PyTorch (a graph tool renamed initializers, a call
    // of a shared head reads a private copy): the convolution's own value, kept. Without
    // dataflow, or without the functions a call ran, a functional batch_norm cannot be ruled out.
    if (calls.dataflow && calls.functional_recorded && !BatchNormReads(calls, ts[i])) continue;
    const std::string x = pair[i];
    for (size_t s = 0; s < n; ++s) {
      if (pair[s] == x && root[s] == root[i])
        unpair(s, "the exporter rewrote the weights of " + prod->name +
                      " (a BatchNorm folded into it): the value before that has no counterpart");
    }
    // captures without dataflow: the module without nodes completing right after it is the
    // BatchNorm that was folded
    size_t next = i + 1;
    while (next < n && root[next] == root[i]) ++next;
    if (!calls.dataflow && next < n && pair[next].empty() && graph.nodes(ts[next].call).empty()) {
      pair[next] = x;
      method[next] = AlignMethod::kBnFolded;
      confidence[next] = 1;
      note[next] = "folded into " + prod->name + " (a module without nodes right after it)";
    }
  }
  std::unordered_map<std::string, std::string> read_by;  // parameter -> node outside its calls
  for (const auto& node : g.nodes()) {
    const std::string& p = graph.ForeignParameter(node.topo_index);
    if (!p.empty()) read_by.emplace(p, node.name);
  }
  // a call whose own parameter a node outside it reads (a fusion moved part of the module out
  // of its scope: a Linear's bias into the activation or normalization after it): its output
  // was never made; the tensor left in its scope lacks that part
  for (size_t i = 0; i < n; ++i) {
    const int c = ts[i].call;
    if (pair[i].empty() || plans[i].alias >= 0 || !plans[i].alias_input.empty() ||
        !graph.certain(c) || method[i] == AlignMethod::kBnFolded)
      continue;
    const std::string why = read_by.empty() ? "" : ReadOutside(calls, read_by, c);
    if (why.empty()) continue;
    const std::string x = pair[i];
    for (size_t s = 0; s < n; ++s) {
      if (pair[s] == x && root[s] == root[i]) unpair(s, why);
    }
  }
  Alignment al;
  for (size_t i = 0; i < n; ++i) {
    const TorchCall& call = calls.calls[ts[i].call];
    AlignmentRow row = CallRow(call, ts[i].name, ts[i].output);
    row.onnx_tensor = pair[i];
    row.method = method[i];
    row.confidence = pair[i].empty() ? 0 : confidence[i];
    row.note = note[i];
    if (!pair[i].empty()) al.rename[row.torch_name] = pair[i];
    al.rows.push_back(std::move(row));
  }
  return al;
}

std::vector<ModuleSpan> ModuleSpans(const TorchCalls& calls, const CallGraph& graph,
                                    const Model& model, const Alignment& al) {
  // who holds each ONNX tensor's value on the PyTorch side: a structural pair, or a model input
  std::unordered_map<std::string, std::string> holder;
  for (const auto& r : al.rows) {
    if (!r.onnx_tensor.empty() && !al.advisory.count(r.torch_name))
      holder.emplace(r.onnx_tensor, r.torch_name);
  }
  for (const auto& in : model.summary().inputs) holder.emplace(in.name, in.name);
  std::vector<ModuleSpan> spans(calls.calls.size());
  std::vector<bool> keep(calls.calls.size(), false);
  for (size_t c = 0; c < calls.calls.size(); ++c) {
    if (!graph.certain(static_cast<int>(c)) || graph.nodes(static_cast<int>(c)).empty()) continue;
    keep[c] = true;
    ModuleSpan& s = spans[c];
    s.module = calls.calls[c].module;
    s.call_index = calls.calls[c].call_index;
    s.nodes = graph.nodes(static_cast<int>(c));
    s.inputs = graph.inputs(static_cast<int>(c));
    for (const auto& i : s.inputs) {
      auto it = holder.find(i);
      s.inputs_torch.push_back(it == holder.end() ? "" : it->second);
    }
  }
  for (const auto& t : calls.tensors) {
    if (keep[t.call]) spans[t.call].torch_outputs.push_back(t.name);
  }
  std::vector<ModuleSpan> out;
  for (size_t c = 0; c < spans.size(); ++c) {
    if (keep[c]) out.push_back(std::move(spans[c]));
  }
  return out;
}

}  // namespace align

const char* AlignMethodName(AlignMethod m) {
  switch (m) {
    case AlignMethod::kScope:
      return "scope";
    case AlignMethod::kContainer:
      return "container";
    case AlignMethod::kBnFolded:
      return "bn-folded";
    case AlignMethod::kFusedNormAct:
      return "fused-norm-act";
    case AlignMethod::kNoNodes:
      return "no-nodes";
    case AlignMethod::kCallInput:
      return "call-input";
    case AlignMethod::kFunctional:
      return "functional";
    case AlignMethod::kValue:
      return "value";
    case AlignMethod::kNone:
      return "none";
  }
  return "none";
}

double StructuralCoverage(const Alignment& al) {
  size_t paired = 0, rows = 0;
  for (const auto& r : al.rows) {
    if (r.inside) continue;
    ++rows;
    if (!r.onnx_tensor.empty() && r.method != AlignMethod::kValue) ++paired;
  }
  return rows == 0 ? 0 : static_cast<double>(paired) / static_cast<double>(rows);
}

Expected<Alignment> AlignTorchCapture(Side& torch_side, Side& onnx_side, uint64_t max_memory) {
  const Model* model = onnx_side.model();
  if (model == nullptr)
    return InvalidArgument(
        "aligning a PyTorch capture needs a live ONNX side (a model), not a dump");
  OP_ASSIGN_OR_RETURN(align::TorchCalls calls,
                      align::ReadTorchCalls(torch_side.info().path, torch_side.tensors()));
  calls.fetch_budget = max_memory;
  align::CallGraph graph(calls, *model);
  std::vector<align::Plan> plans = align::PlanAlignment(calls, graph, *model);
  OP_RETURN_IF_ERROR(align::ApplyEvidence(torch_side, onnx_side, calls, &plans));
  std::vector<bool> eligible;
  Alignment al = align::Finalize(calls, graph, *model, plans, &eligible);
  OP_RETURN_IF_ERROR(
      align::AdvisoryValueSearch(torch_side, onnx_side, calls, graph, eligible, &al));
  OP_RETURN_IF_ERROR(align::CheckParameterParity(torch_side, onnx_side, calls, graph, &al));
  OP_RETURN_IF_ERROR(align::PairCallInputs(torch_side, onnx_side, calls, graph, *model, &al));
  OP_RETURN_IF_ERROR(align::PairFunctional(torch_side, onnx_side, calls, graph, *model, &al));
  al.modules = align::ModuleSpans(calls, graph, *model, al);
  return al;
}

}  // namespace onnxprobe
