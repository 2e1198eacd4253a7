#include "align/plan.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

namespace onnxprobe::align {
namespace {

class Planner {
 public:
  Planner(const TorchCalls& calls, const CallGraph& graph, const Model& model)
      : calls_(calls), graph_(graph), model_(model) {
    const auto& ts = calls.tensors;
    for (size_t i = 0; i < ts.size(); ++i) index_[ts[i].name] = static_cast<int>(i);
    consumers_.assign(ts.size(), {});
    aliases_.assign(ts.size(), {});
    for (size_t d = 0; d < calls.calls.size(); ++d) {
      for (const auto& r : calls.calls[d].inputs) {
        int t = Index(r);
        if (t >= 0) consumers_[t].push_back(static_cast<int>(d));
      }
    }
    for (size_t i = 0; i < ts.size(); ++i) {
      int t = Index(calls.calls[ts[i].call].outputs[ts[i].output].same_as);
      if (t >= 0 && t < static_cast<int>(i)) aliases_[t].push_back(static_cast<int>(i));
    }
  }

  Plan PlanTensor(int i) const {
    const TorchTensorMeta& m = calls_.tensors[i];
    const int c = m.call;
    const TorchCall& call = calls_.calls[c];
    const TorchOutput& out = call.outputs[m.output];
    const bool no_nodes = graph_.nodes(c).empty();
    Plan p;
    // the exporter flattens the model's outputs into the graph outputs, in order
    if (c == graph_.root() && call.outputs.size() == graph_.graph_outputs().size()) {
      p.method = AlignMethod::kScope;
      p.candidates = {graph_.graph_outputs()[m.output]};
      p.note = "the model's output";
      return p;
    }
    if (out.same_as.kind == TorchRef::Kind::kTensor) {
      int t = Index(out.same_as);
      if (t < 0 || t >= i) {
        p.note = "the same tensor as '" + out.same_as.name + "', which the capture does not hold";
        return p;
      }
      p.alias = t;
      int pc = calls_.tensors[t].call;
      bool from_sub = pc != c && graph_.IsAncestorOrSelf(c, pc);
      p.method = from_sub || !no_nodes ? AlignMethod::kContainer : AlignMethod::kNoNodes;
      p.note = from_sub ? "the same tensor as " + out.same_as.name + " (a submodule's output)"
                        : "the same tensor as its input " + out.same_as.name;
      return p;
    }
    if (out.same_as.kind == TorchRef::Kind::kInput) {
      const TensorEntry* e = model_.index().Find(out.same_as.name);
      if (e == nullptr || e->kind != TensorKind::kGraphInput) {
        p.note =
            "the same tensor as model input '" + out.same_as.name + "', which the ONNX graph lacks";
        return p;
      }
      p.alias_input = out.same_as.name;
      p.method = no_nodes ? AlignMethod::kNoNodes : AlignMethod::kContainer;
      p.note = "the same tensor as the model input " + out.same_as.name;
      return p;
    }
    if (!graph_.certain(c)) {
      p.candidates = FromConsumers(i);
      p.method = p.candidates.empty() ? AlignMethod::kNone : AlignMethod::kScope;
      p.note = "repeated calls of scope '" + call.scope +
               "' cannot be told apart (the exporter numbers only the calls that left nodes)" +
               (p.candidates.empty() ? "" : "; paired by what the modules reading it read");
      return p;
    }
    const bool folded_bn = call.batchnorm && !graph_.HasOp(c, "BatchNormalization");
    const int normalized = call.inputs.empty() ? -1 : Index(call.inputs[0]);
    if (folded_bn && no_nodes) {
      p.method = AlignMethod::kBnFolded;
      if (normalized >= 0 && normalized < i) {
        p.alias = normalized;
        p.fold_of = normalized;
        p.note = "BatchNorm folded into the convolution that produced " +
                 calls_.tensors[normalized].name;
      } else {
        p.candidates = FromConsumers(i);
        p.note = "BatchNorm folded into the convolution before it; the tensor its consumers read";
        if (p.candidates.empty()) {
          p.method = AlignMethod::kNone;
          p.note = "BatchNorm folded away, and no module reads its output";
        }
      }
      return p;
    }
    if (no_nodes) {
      p.candidates = FromConsumers(i);
      if (p.candidates.empty()) {
        p.note = "no ONNX nodes in its scope, and no module reads its output";
        return p;
      }
      p.method = AlignMethod::kNoNodes;
      p.note = "no ONNX nodes in its scope: the tensor its consumers read";
      return p;
    }
    p.method = folded_bn ? AlignMethod::kFusedNormAct : AlignMethod::kScope;
    if (!folded_bn) p.unread = graph_.unread(c);
    if (folded_bn) {
      p.fold_of = normalized < i ? normalized : -1;
      p.note = "BatchNorm folded into the convolution before it; paired by the rest of its scope";
    }
    p.candidates = Own(c);
    std::vector<std::string> read = FromConsumers(i);
    if (!read.empty()) {
      std::unordered_set<std::string> r(read.begin(), read.end());
      std::vector<std::string> both;
      for (const auto& x : p.candidates) {
        if (r.count(x)) both.push_back(x);
      }
      if (!both.empty()) p.candidates = std::move(both);
    }
    if (p.candidates.empty()) {
      p.method = AlignMethod::kNone;
      p.note = "nothing made in scope '" + call.scope + "' is read outside it";
    }
    return p;
  }

 private:
  int Index(const TorchRef& r) const {
    if (r.kind != TorchRef::Kind::kTensor) return -1;
    auto it = index_.find(r.name);
    return it == index_.end() ? -1 : it->second;
  }

  // The call's hand-on tensors made by its own nodes (not a submodule's); all of them when none is.
  std::vector<std::string> Own(int c) const {
    const GraphIndex& g = model_.index();
    std::vector<std::string> own;
    for (const auto& o : graph_.outputs(c)) {
      const TensorEntry* e = g.Find(o);
      if (e != nullptr && e->producer >= 0 && graph_.owner(e->producer) == c) own.push_back(o);
    }
    return own.empty() ? graph_.outputs(c) : own;
  }

  // What the modules reading tensor i (or a tensor that is the same object) read from outside
  // themselves: the intersection over those whose nodes are known.
  std::vector<std::string> FromConsumers(int i) const {
    const int c = calls_.tensors[i].call;
    std::vector<int> todo = {i}, readers;
    for (size_t k = 0; k < todo.size(); ++k) {
      for (int a : aliases_[todo[k]]) todo.push_back(a);
      for (int d : consumers_[todo[k]]) {
        if (graph_.IsAncestorOrSelf(d, c) || graph_.IsAncestorOrSelf(c, d)) continue;
        if (!graph_.certain(d) || graph_.nodes(d).empty()) continue;
        readers.push_back(d);
      }
    }
    if (readers.empty()) return {};
    std::vector<std::string> out = graph_.inputs(readers[0]);
    for (size_t k = 1; k < readers.size(); ++k) {
      const auto& in = graph_.inputs(readers[k]);
      std::unordered_set<std::string> s(in.begin(), in.end());
      out.erase(
          std::remove_if(out.begin(), out.end(), [&](const std::string& x) { return !s.count(x); }),
          out.end());
    }
    return out;
  }

  const TorchCalls& calls_;
  const CallGraph& graph_;
  const Model& model_;
  std::unordered_map<std::string, int> index_;
  std::vector<std::vector<int>> consumers_, aliases_;
};

}  // namespace

std::vector<Plan> PlanAlignment(const TorchCalls& calls, const CallGraph& graph,
                                const Model& model) {
  Planner planner(calls, graph, model);
  std::vector<Plan> plans;
  plans.reserve(calls.tensors.size());
  for (size_t i = 0; i < calls.tensors.size(); ++i)
    plans.push_back(planner.PlanTensor(static_cast<int>(i)));
  return plans;
}

}  // namespace onnxprobe::align
