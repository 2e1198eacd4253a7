#include "onnxprobe/capture/branches.h"

#include <algorithm>
#include <cstring>

#include "onnxprobe/graph/graph.h"

namespace onnxprobe {
namespace {

constexpr int kNestingLevels = 8;

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
  OP_ASSIGN_OR_RETURN(std::string bytes, MarkOutputs(model, names));
  auto session = backend.CreateSession(bytes, model.dir(), options);
  if (!session.ok()) return session.status().WithContext(model.path());
  auto r = (*session)->Run(Refs(inputs), names);
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
  TakenBranches out{model, {}, {}, {}};
  for (int level = 0; level < kNestingLevels; ++level) {
    std::vector<const NodeInfo*> ifs;
    for (const auto& n : out.model.index().nodes()) {
      bool onnx_domain = n.domain.empty() || n.domain == "ai.onnx";
      if (n.op_type == "If" && onnx_domain && !n.inputs.empty() && !n.outputs.empty())
        ifs.push_back(&n);
    }
    if (ifs.empty()) break;
    std::map<std::string, const Tensor*> values;
    for (const auto& in : inputs) values[in.name] = &in.tensor;
    std::vector<std::string> computed;
    for (const NodeInfo* n : ifs) {
      const TensorEntry* e = out.model.index().Find(n->inputs[0]);
      if (e != nullptr && e->producer >= 0) computed.push_back(n->inputs[0]);
    }
    std::vector<RunOutput> run;
    if (!computed.empty()) {
      auto r = RunMarked(out.model, backend, options, inputs, computed);
      if (!r.ok()) return r.status().WithContext("the If nodes' conditions");
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
      bool cond = ElementAsDouble(*v->second, 0) != 0;
      taken[n->outputs[0]] = cond;
      order.emplace_back(n->outputs[0], name);
    }
    if (taken.empty()) break;
    auto bytes = InlineIfBranches(out.model, taken);
    if (!bytes.ok()) {
      out.notes.push_back("If nodes not inlined: " + bytes.status().message());
      break;
    }
    ifs.clear();  // they point into the model replaced now
    run.clear();
    OP_ASSIGN_OR_RETURN(out.model, Model::Derived(model, std::move(*bytes)));
    for (const auto& [first, name] : order) {
      auto t = taken.find(first);
      out.taken[t->first] = t->second;
      out.inlined.push_back(name);
      out.notes.push_back("If " + name + " runs its " + (t->second ? "then" : "else") +
                          "_branch for these inputs: the branch's tensors are captured as "
                          "main-graph tensors");
    }
  }
  // an If left as it is is said once, whatever the nesting levels walked
  std::vector<std::string> notes;
  for (auto& n : out.notes) {
    if (std::find(notes.begin(), notes.end(), n) == notes.end()) notes.push_back(std::move(n));
  }
  out.notes = std::move(notes);
  if (out.taken.empty() || options.optimization_level == OptLevel::kDisabled) return out;
  std::vector<std::string> outputs;
  for (const auto& v : model.summary().outputs) outputs.push_back(v.name);
  OP_ASSIGN_OR_RETURN(auto as_is, RunMarked(model, backend, options, inputs, outputs));
  OP_ASSIGN_OR_RETURN(auto inlined, RunMarked(out.model, backend, options, inputs, outputs));
  bool same = as_is.size() == inlined.size();
  for (size_t i = 0; same && i < as_is.size(); ++i)
    same = SameBits(as_is[i].tensor, inlined[i].tensor);
  if (same) return out;
  TakenBranches kept{model, {}, {}, {}};
  kept.notes.push_back(
      "If nodes not inlined: at optimization level " + OptLevelName(options.optimization_level) +
      " the model with its taken branches inlined computes other graph outputs than the model "
      "(the optimizer fuses across the If); the tensors of their branches are not captured");
  return kept;
}

}  // namespace onnxprobe
