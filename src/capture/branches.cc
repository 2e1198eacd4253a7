#include "onnxprobe/capture/branches.h"

#include <algorithm>
#include <cstring>

#include "onnxprobe/capture/capture.h"
#include "onnxprobe/graph/graph.h"

namespace onnxprobe {
namespace {

constexpr int kNestingLevels = 8;
// Unrolling copies a body once per iteration: beyond these, the copy (and its sessions) would
// cost more than a comparison of the model; such a loop stays as it is, and a note says so.
constexpr int64_t kMaxIterations = 1024;
constexpr uint64_t kMaxUnrolledNodes = 20000;

std::vector<std::pair<std::string, const Tensor*>> Refs(const std::vector<NamedTensor>& inputs) {
  std::vector<std::pair<std::string, const Tensor*>> refs;
  for (const auto& in : inputs) refs.emplace_back(in.name, &in.tensor);
  return refs;
}

// `names` of `model` on `inputs`, in a session with them marked as outputs.
Expected<std::vector<RunOutput>> RunMarked(const Model& model, Backend& backend,
                                           const SessionOptions& options,
                                           const std::vector<NamedTensor>& inputs,
                                           const std::vector<std::string>& names) {
  OP_ASSIGN_OR_RETURN(auto session, OpenMarkedSession(model, backend, names, options));
  auto r = session->Run(Refs(inputs), names);
  if (!r.ok()) return r.status().WithContext(model.path());
  return r;
}

bool SameBits(const Tensor& x, const Tensor& y) {
  return x.dtype() == y.dtype() && x.shape() == y.shape() && x.byte_size() == y.byte_size() &&
         std::memcmp(x.data(), y.data(), x.byte_size()) == 0;
}

}  // namespace

Expected<TakenBranches> TakeBranches(const Model& model, Backend& backend,
                                     const SessionOptions& options,
                                     const std::vector<NamedTensor>& inputs) {
  TakenBranches out{model, {}, {}, {}, {}, {}};
  for (int level = 0; level < kNestingLevels; ++level) {
    std::vector<const NodeInfo*> ifs;
    for (const auto& n : out.model.index().nodes()) {
      bool onnx_domain = n.domain.empty() || n.domain == "ai.onnx";
      if (n.op_type == "If" && onnx_domain && !n.inputs.empty() && !n.outputs.empty())
        ifs.push_back(&n);
    }
    std::vector<LoopCount> loops = CountableLoops(out.model);
    if (ifs.empty() && loops.empty()) break;
    std::map<std::string, const Tensor*> values;
    for (const auto& in : inputs) values[in.name] = &in.tensor;
    std::vector<std::string> computed;
    auto measure = [&](const std::string& x) {
      const TensorEntry* e = out.model.index().Find(x);
      if (e != nullptr && e->producer >= 0 &&
          std::find(computed.begin(), computed.end(), x) == computed.end())
        computed.push_back(x);
    };
    for (const NodeInfo* n : ifs) measure(n->inputs[0]);
    for (const LoopCount& c : loops) {
      if (c.why_not.empty() && c.known < 0) measure(c.tensor);
    }
    std::vector<RunOutput> run;
    if (!computed.empty()) {
      auto r = RunMarked(out.model, backend, options, inputs, computed);
      if (!r.ok()) return r.status().WithContext("the If conditions and loop counts");
      run = std::move(*r);
      for (size_t i = 0; i < computed.size() && i < run.size(); ++i)
        values[computed[i]] = &run[i].tensor;
    }
    std::map<std::string, bool> taken;
    std::vector<std::pair<std::string, std::string>> order;  // first output, name (ifs' order)
    for (const NodeInfo* n : ifs) {
      const std::string name = n->name.empty() ? n->outputs[0] : n->name;
      auto v = values.find(n->inputs[0]);
      if (v == values.end() || v->second->num_elements() != 1) {
        out.notes.push_back("If " + name + " not inlined: its condition '" + n->inputs[0] +
                            "' is neither an input nor a computed scalar; the tensors of its "
                            "branches are not captured");
        continue;
      }
      taken[n->outputs[0]] = ElementAsDouble(*v->second, 0) != 0;
      order.emplace_back(n->outputs[0], name);
    }
    std::map<std::string, int64_t> iterations;
    std::vector<std::string> counted;
    for (const LoopCount& c : loops) {
      const std::string head = c.node + " not unrolled: ";
      int64_t count = c.known;
      auto v = values.find(c.tensor);
      if (count < 0 && c.why_not.empty() && v != values.end()) {
        const Tensor& t = *v->second;
        int64_t rank = int64_t(t.shape().size()), axis = c.axis < 0 ? c.axis + rank : c.axis;
        if (c.trip_count && t.num_elements() == 1)
          count = int64_t(ElementAsDouble(t, 0));
        else if (!c.trip_count && axis >= 0 && axis < rank)
          count = t.shape()[size_t(axis)];
      }
      if (count < 0) {
        out.notes.push_back(head +
                            (c.why_not.empty() ? "its iteration count is unknown" : c.why_not) +
                            "; the tensors of its body are not captured");
      } else if (count == 0) {
        out.notes.push_back(c.node + " runs no iteration on these inputs");
      } else if (count > kMaxIterations || uint64_t(count) * c.body_nodes > kMaxUnrolledNodes) {
        out.notes.push_back(head + std::to_string(count) + " iterations of " +
                            std::to_string(c.body_nodes) + " nodes exceed what is unrolled (" +
                            std::to_string(kMaxIterations) + " iterations, " +
                            std::to_string(kMaxUnrolledNodes) +
                            " nodes); the tensors of its body are not captured");
      } else {
        iterations[c.first_output] = count;
        counted.push_back(c.node + " runs " + std::to_string(count) +
                          (count == 1 ? " iteration" : " iterations") +
                          " on these inputs: each iteration's tensors are captured as main-graph "
                          "tensors, named <tensor>@<iteration>");
      }
    }
    if (taken.empty() && iterations.empty()) break;
    ifs.clear();  // they point into the model replaced below
    run.clear();
    // the model replaced by a pass's result; false (said in a note) when the pass refused
    auto apply = [&](Expected<std::string> bytes, const std::string& what) -> Expected<bool> {
      if (!bytes.ok()) {
        out.notes.push_back(what + " " + bytes.status().message());
        return false;
      }
      OP_ASSIGN_OR_RETURN(out.model, Model::Derived(model, std::move(*bytes)));
      return true;
    };
    if (!taken.empty()) {
      OP_ASSIGN_OR_RETURN(bool done,
                          apply(InlineIfBranches(out.model, taken), "If nodes not inlined:"));
      if (!done) break;
      for (const auto& [first, name] : order) {
        bool cond = taken.at(first);
        out.taken[first] = cond;
        out.inlined.push_back(name);
        out.notes.push_back("If " + name + " runs its " + (cond ? "then" : "else") +
                            "_branch for these inputs: the branch's tensors are captured as "
                            "main-graph tensors");
      }
    }
    if (!iterations.empty()) {
      OP_ASSIGN_OR_RETURN(bool done,
                          apply(UnrollLoops(out.model, iterations), "loops not unrolled:"));
      if (!done) break;
      for (const auto& [first, count] : iterations) out.iterations[first] = count;
      for (const LoopCount& c : loops) {
        if (iterations.count(c.first_output)) out.unrolled.push_back(c.node);
      }
      out.notes.insert(out.notes.end(), counted.begin(), counted.end());
    }
  }
  // an If left as it is is said once, whatever the nesting levels walked
  std::vector<std::string> notes;
  for (auto& n : out.notes) {
    if (std::find(notes.begin(), notes.end(), n) == notes.end()) notes.push_back(std::move(n));
  }
  out.notes = std::move(notes);
  if ((out.taken.empty() && out.iterations.empty()) ||
      options.optimization_level == OptLevel::kDisabled)
    return out;
  std::vector<std::string> outputs;
  for (const auto& v : model.summary().outputs) outputs.push_back(v.name);
  OP_ASSIGN_OR_RETURN(auto as_is, RunMarked(model, backend, options, inputs, outputs));
  OP_ASSIGN_OR_RETURN(auto inlined, RunMarked(out.model, backend, options, inputs, outputs));
  bool same = as_is.size() == inlined.size();
  for (size_t i = 0; same && i < as_is.size(); ++i)
    same = SameBits(as_is[i].tensor, inlined[i].tensor);
  if (same) return out;
  TakenBranches kept{model, {}, {}, {}, {}, {}};
  kept.notes.push_back(
      "control flow not inlined: at optimization level " +
      OptLevelName(options.optimization_level) +
      " the model with its If branches inlined and loops unrolled computes other graph outputs "
      "than the model (the optimizer fuses across their boundaries); the tensors inside them are "
      "not captured");
  return kept;
}

}  // namespace onnxprobe
