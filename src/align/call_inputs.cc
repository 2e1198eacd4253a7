// The boundaries functional code leaves between module calls: a call's argument that no module
// made (x + block(x), a view, a mask) is recorded by the companion, and paired here with the ONNX
// tensor the call's nodes read from outside, so that comparison, isolation and module isolation
// can start at it.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <unordered_map>

#include "align/evidence.h"
#include "align/finalize.h"
#include "onnxprobe/common/format.h"

namespace onnxprobe::align {
namespace {

// The tensor `name` is made from by ops that keep element order (data input only), or `name`.
std::string OrderKeepingSource(const Model& model, std::string name) {
  const GraphIndex& g = model.index();
  for (int steps = 0; steps < 16; ++steps) {
    const TensorEntry* e = g.Find(name);
    if (e == nullptr || e->producer < 0) break;
    const NodeInfo& n = g.nodes()[e->producer];
    const std::string& op = n.op_type;
    if (op != "Reshape" && op != "Flatten" && op != "Squeeze" && op != "Unsqueeze" &&
        op != "Identity")
      break;
    if (n.inputs.empty() || n.inputs[0].empty()) break;
    name = n.inputs[0];
  }
  return name;
}

// Whether a node of `call` reading `t` also reads another module's parameter: a fusion merged
// work done outside the call into it, so what it reads is not the call's argument (ONNX
// Runtime's SkipLayerNormalization reads a Linear's output without its bias, and the bias).
bool FusedReader(const CallGraph& graph, const Model& model, int call, const std::string& t) {
  const TensorEntry* e = model.index().Find(t);
  if (e == nullptr) return false;
  for (int c : e->consumers) {
    if (graph.owner(c) >= 0 && graph.IsAncestorOrSelf(call, graph.owner(c)) &&
        graph.ReadsForeignParameter(c))
      return true;
  }
  return false;
}

// Calls whose nodes read more floating-point tensors from outside than the call takes arguments,
// two of them by one node, one of those a candidate (`open`): a fusion merged work done outside
// the call into that node (ONNX Runtime's SkipLayerNormalization adds in the residual its
// LayerNorm's argument was the sum of), so none of them is the argument. Each with (read from
// outside, arguments).
std::map<int, std::pair<size_t, size_t>> OverfedCalls(
    const TorchCalls& calls, const CallGraph& graph, const Model& model,
    const std::map<int, std::vector<std::string>>& open,
    const std::function<bool(const std::string&)>& onnx_floating,
    const std::function<bool(const TorchRef&, const std::string&)>& torch_floating) {
  std::map<std::pair<int, int>, std::string> recorded;  // (call, argument) -> capture tensor
  for (const auto& ci : calls.call_inputs) recorded[{ci.call, ci.input}] = ci.tensor;
  std::map<int, std::pair<size_t, size_t>> overfed;
  for (const auto& [c, cands] : open) {
    std::set<std::string> read;
    for (const auto& t : graph.inputs(c)) {
      if (onnx_floating(t)) read.insert(t);
    }
    bool merged = false;
    for (int k : graph.nodes(c)) {
      const NodeInfo& n = model.index().nodes()[k];
      size_t outside = 0;
      bool candidate = false;
      for (const auto& i : std::set<std::string>(n.inputs.begin(), n.inputs.end())) {
        if (!read.count(i)) continue;
        ++outside;
        candidate = candidate || std::count(cands.begin(), cands.end(), i) > 0;
      }
      merged = merged || (outside >= 2 && candidate);
    }
    if (!merged) continue;
    size_t args = 0;
    const auto& ins = calls.calls[c].inputs;
    for (size_t p = 0; p < ins.size(); ++p) {
      auto rec = recorded.find({c, static_cast<int>(p)});
      bool by_record = ins[p].kind == TorchRef::Kind::kUnknown && rec != recorded.end();
      if (torch_floating(ins[p], by_record ? rec->second : ins[p].name)) ++args;
    }
    if (read.size() > args) overfed[c] = {read.size(), args};
  }
  return overfed;
}

}  // namespace

Status PairCallInputs(Side& torch_side, Side& onnx_side, const TorchCalls& calls,
                      const CallGraph& graph, const Model& model, Alignment* al) {
  if (calls.call_inputs.empty()) return Status::Ok();
  // what PyTorch already holds: structurally aligned tensors and the model's inputs
  std::set<std::string> held;
  std::unordered_map<std::string, std::string> holder;  // ONNX tensor -> the PyTorch tensor
  for (const auto& r : al->rows) {
    if (r.onnx_tensor.empty() || al->advisory.count(r.torch_name)) continue;
    held.insert(r.onnx_tensor);
    holder.emplace(r.onnx_tensor, r.torch_name);
  }
  for (const auto& in : model.summary().inputs) held.insert(in.name);
  // the element type of every tensor the calls read from outside: declared, or seen when fetched
  std::map<std::string, DType> static_type;
  for (const auto& in : model.summary().inputs) {
    auto dt = DTypeFromOnnx(in.elem_type);
    if (dt.ok()) static_type[in.name] = *dt;
  }
  std::set<std::string> capturable;
  for (const auto& t : onnx_side.tensors()) capturable.insert(t.name);
  // per call: the ONNX tensors its nodes read from outside that PyTorch does not hold
  std::map<int, std::vector<std::string>> open;
  std::set<std::string> fetch;
  for (const auto& ci : calls.call_inputs) {
    if (open.count(ci.call) || !graph.certain(ci.call) || graph.nodes(ci.call).empty()) continue;
    auto& cands = open[ci.call];
    for (const auto& t : graph.inputs(ci.call)) {
      const ValueInfo* vi = static_type.count(t) ? nullptr : model.FindValueInfo(t);
      auto dt = vi != nullptr ? DTypeFromOnnx(vi->elem_type) : Expected<DType>(NotFound(t));
      if (dt.ok()) static_type[t] = *dt;
      bool untyped = !static_type.count(t) && capturable.count(t);
      if (held.count(t) || FusedReader(graph, model, ci.call, t)) {
        if (untyped) fetch.insert(t);  // only its type is wanted
        continue;
      }
      cands.push_back(t);
      fetch.insert(t);
    }
  }
  // dtype and shape on both sides decide among candidates (values do not: an error made by the
  // functional code itself must show at its own row; values only reject a permutation)
  std::unordered_map<std::string, std::pair<DType, Shape>> onnx_type, torch_type;
  std::vector<std::string> names(fetch.begin(), fetch.end());
  OP_RETURN_IF_ERROR(FetchInBatches(onnx_side, names, calls.fetch_budget, [&](const RunOutput& o) {
    if (!o.tensor.empty()) onnx_type[o.name] = {o.tensor.dtype(), o.tensor.shape()};
  }));
  std::vector<std::string> torch_names;
  for (const auto& ci : calls.call_inputs) torch_names.push_back(ci.tensor);
  OP_ASSIGN_OR_RETURN(auto tv, torch_side.Fetch(torch_names));
  for (const auto& o : tv) {
    if (!o.tensor.empty()) torch_type[o.name] = {o.tensor.dtype(), o.tensor.shape()};
  }

  std::unordered_map<std::string, const Tensor*> torch_value;
  for (const auto& o : tv) torch_value[o.name] = &o.tensor;
  auto onnx_floating = [&](const std::string& t) {
    auto st = static_type.find(t);
    auto ot = onnx_type.find(t);
    return st != static_type.end() ? IsFloating(st->second)
                                   : ot != onnx_type.end() && IsFloating(ot->second.first);
  };
  std::unordered_map<std::string, const TorchTensorMeta*> meta;
  for (const auto& m : calls.tensors) meta.emplace(m.name, &m);
  auto torch_floating = [&](const TorchRef& in, const std::string& name) {
    auto st = in.kind == TorchRef::Kind::kInput ? static_type.find(name) : static_type.end();
    auto tt = torch_type.find(name);
    auto m = meta.find(name);
    return st != static_type.end()                    ? IsFloating(st->second)
           : tt != torch_type.end()                   ? IsFloating(tt->second.first)
           : m != meta.end() && m->second->known_type ? IsFloating(m->second->dtype)
                                                      : true;  // unknown: counted
  };
  const auto overfed = OverfedCalls(calls, graph, model, open, onnx_floating, torch_floating);
  std::set<std::string> claimed;
  std::vector<AlignmentRow> rows;
  std::vector<std::string> check;  // the chosen ONNX tensors, for the layout check
  for (const auto& ci : calls.call_inputs) {
    const TorchCall& call = calls.calls[ci.call];
    AlignmentRow row = CallRow(call, ci.tensor, -1);
    std::string what =
        "argument " + std::to_string(ci.input) + " of the call, made by code outside any module";
    auto it = open.find(ci.call);
    auto tt = torch_type.find(ci.tensor);
    std::vector<std::string> match;
    auto over = overfed.find(ci.call);
    if (it != open.end() && tt != torch_type.end() && over == overfed.end()) {
      for (const auto& c : it->second) {
        auto ot = onnx_type.find(c);
        if (!claimed.count(c) && ot != onnx_type.end() && ot->second == tt->second)
          match.push_back(c);
      }
    }
    if (match.size() == 1) {
      row.onnx_tensor = match[0];
      row.method = AlignMethod::kCallInput;
      row.confidence = 1;
      row.note = what + ": the one tensor of its type the call's nodes read from outside";
      claimed.insert(match[0]);
      check.push_back(match[0]);
    } else if (over != overfed.end()) {
      row.note = what + ": the call's nodes read " + std::to_string(over->second.first) +
                 " floating-point tensors from outside where the call takes " +
                 std::to_string(over->second.second) +
                 ", one node two of them: work outside the call seems fused into it, so none is "
                 "paired with the argument";
    } else {
      row.note =
          what + (it == open.end() ? ": the call's nodes are not known"
                  : match.empty()  ? ": no tensor of its type read by the call's nodes"
                                   : ": several tensors of its type read by the call's nodes");
    }
    rows.push_back(std::move(row));
  }
  // a type that matches by coincidence (a square activation before a transpose the exporter
  // moved into the call's nodes): the same values in another order are another tensor
  auto unpair = [](AlignmentRow& row, const std::string& why) {
    row.note = row.note.substr(0, row.note.find(':')) + ": " + row.onnx_tensor +
               ", the one tensor of its type the call's nodes read from outside, " + why;
    row.onnx_tensor.clear();
    row.method = AlignMethod::kNone;
    row.confidence = 0;
  };
  // 1. the candidate made from a tensor PyTorch holds by ops that keep element order (Reshape,
  // Flatten, ...): the argument must hold that tensor's values in that order. PyTorch's values
  // on both ends, so a fault in the ONNX graph does not hide a permutation.
  std::vector<std::pair<size_t, std::string>> via;  // row, the PyTorch tensor it comes from
  std::vector<std::string> held_names;
  for (size_t k = 0; k < rows.size(); ++k) {
    if (rows[k].onnx_tensor.empty()) continue;
    std::string src = OrderKeepingSource(model, rows[k].onnx_tensor);
    auto h = holder.find(src);
    if (src == rows[k].onnx_tensor || h == holder.end()) continue;
    via.emplace_back(k, h->second);
    held_names.push_back(h->second);
  }
  if (!via.empty()) {
    auto hv = torch_side.Fetch(held_names);
    std::unordered_map<std::string, const Tensor*> held_value;
    if (hv.ok()) {
      for (const auto& o : *hv) held_value[o.name] = &o.tensor;
    }
    for (const auto& [k, from] : via) {
      AlignmentRow& row = rows[k];
      auto t = torch_value.find(row.torch_name);
      auto f = held_value.find(from);
      double in_order = 0, as_sets = 0;
      if (t != torch_value.end() && f != held_value.end() &&
          SameValuesOtherLayout(*f->second, *t->second, &in_order, &as_sets))
        unpair(row, "is made from " + from + " keeping its element order, and the argument holds " +
                        from + "'s values in another order (relative distance " +
                        FormatNumber(in_order) + ", sorted " + FormatNumber(as_sets) + ")");
    }
  }
  // 2. otherwise the candidate's own values, on the unfaulted path
  std::unordered_map<std::string, size_t> row_of;  // claimed tensors are read by one row each
  for (size_t k = 0; k < rows.size(); ++k) {
    if (!rows[k].onnx_tensor.empty()) row_of[rows[k].onnx_tensor] = k;
  }
  check.clear();
  for (const auto& [name, k] : row_of) check.push_back(name);
  OP_RETURN_IF_ERROR(FetchInBatches(onnx_side, check, calls.fetch_budget, [&](const RunOutput& o) {
    auto k = row_of.find(o.name);
    if (k == row_of.end()) return;
    AlignmentRow& row = rows[k->second];
    auto t = torch_value.find(row.torch_name);
    double in_order = 0, as_sets = 0;
    if (t != torch_value.end() && SameValuesOtherLayout(*t->second, o.tensor, &in_order, &as_sets))
      unpair(row, "holds its values in another order (relative distance " + FormatNumber(in_order) +
                      ", sorted " + FormatNumber(as_sets) + ")");
  }));
  for (auto& row : rows) {
    if (!row.onnx_tensor.empty()) al->rename[row.torch_name] = row.onnx_tensor;
    al->rows.push_back(std::move(row));
  }
  return Status::Ok();
}

}  // namespace onnxprobe::align
