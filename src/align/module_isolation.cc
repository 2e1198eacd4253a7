// A module call run alone on the ONNX side's runtime with PyTorch's values at its inputs: the
// step between "this module's output fails" and "this node inside it is wrong".
#include <algorithm>

#include "onnxprobe/align/align.h"
#include "onnxprobe/engine/comparison.h"
#include "onnxprobe/graph/graph.h"
#include "onnxprobe/side/run_alone.h"

namespace onnxprobe {

Expected<ModuleIsolation> IsolateModuleCall(Side& torch_side, Side& onnx_side,
                                            const Alignment& alignment, const ModuleSpan& span,
                                            const TolerancePolicy& policy,
                                            const CompareOptions& kernel) {
  const Model* model = onnx_side.model();
  if (model == nullptr) return InvalidArgument("isolating a module needs a live ONNX side");
  ModuleIsolation iso;
  const GraphIndex& g = model->index();
  std::vector<bool> inside(g.nodes().size(), false);
  for (int k : span.nodes) inside[k] = true;
  for (const auto& name : span.torch_outputs) {
    auto it = std::find_if(alignment.rows.begin(), alignment.rows.end(),
                           [&](const AlignmentRow& r) { return r.torch_name == name; });
    if (it == alignment.rows.end() || it->onnx_tensor.empty() || alignment.advisory.count(name))
      continue;
    const TensorEntry* e = g.Find(it->onnx_tensor);
    if (e == nullptr || e->producer < 0 || !inside[e->producer]) continue;
    iso.output_torch = name;
    iso.output_onnx = it->onnx_tensor;
    break;
  }
  if (iso.output_onnx.empty())
    return NotFound("module " + span.module + " has no aligned output made by its own nodes");
  // PyTorch's values at the call's inputs
  OP_ASSIGN_OR_RETURN(auto recorded, torch_side.RecordedInputs());
  std::vector<std::string> fetch = {iso.output_torch};
  for (size_t i = 0; i < span.inputs.size(); ++i) {
    const std::string& t = span.inputs_torch[i];
    if (t.empty())
      return NotFound("module " + span.module + " reads '" + span.inputs[i] +
                      "', which PyTorch has no value for");
    bool is_input = std::any_of(recorded.begin(), recorded.end(),
                                [&](const NamedTensor& x) { return x.name == t; });
    if (!is_input && std::find(fetch.begin(), fetch.end(), t) == fetch.end()) fetch.push_back(t);
  }
  OP_ASSIGN_OR_RETURN(auto values, torch_side.Fetch(fetch));
  auto value_of = [&](const std::string& t) -> const Tensor* {
    for (const auto& v : values) {
      if (v.name == t) return &v.tensor;
    }
    for (const auto& r : recorded) {
      if (r.name == t) return &r.tensor;
    }
    return nullptr;
  };
  SubgraphSpec spec;
  spec.nodes = span.nodes;
  // constants made outside the call (the exporter shares them) come along
  std::vector<int> todo = span.nodes;
  for (size_t k = 0; k < todo.size(); ++k) {
    const NodeInfo& n = g.nodes()[todo[k]];
    std::vector<std::string> reads = n.inputs;
    reads.insert(reads.end(), n.implicit_inputs.begin(), n.implicit_inputs.end());
    for (const auto& i : reads) {
      const TensorEntry* e = i.empty() ? nullptr : g.Find(i);
      if (e == nullptr || e->producer < 0 || inside[e->producer]) continue;
      if (std::find(span.inputs.begin(), span.inputs.end(), i) != span.inputs.end()) continue;
      inside[e->producer] = true;
      spec.nodes.push_back(e->producer);
      todo.push_back(e->producer);
    }
  }
  std::vector<std::pair<std::string, const Tensor*>> feed;
  for (size_t i = 0; i < span.inputs.size(); ++i) {
    const Tensor* v = value_of(span.inputs_torch[i]);
    if (v == nullptr) return NotFound("no PyTorch value for '" + span.inputs_torch[i] + "'");
    spec.inputs.push_back(span.inputs[i]);
    spec.input_types.emplace_back(v->dtype(), v->shape());
    feed.emplace_back(span.inputs[i], v);
  }
  spec.outputs = {iso.output_onnx};
  auto out = RunAlone(onnx_side, *model, spec, feed);
  if (!out.ok()) return out.status().WithContext("isolating module " + span.module);
  if ((*out)[0].tensor.empty())
    return BackendError("isolating module " + span.module + ": no value for '" + iso.output_onnx +
                        "'");
  const Tensor* reference = value_of(iso.output_torch);
  iso.nodes = span.nodes.size();
  const TensorEntry* made = g.Find(iso.output_onnx);
  TensorResult row;
  row.tolerance = policy.For(iso.output_onnx, g.nodes()[made->producer].op_type);
  JudgeRow(*reference, (*out)[0].tensor, policy, kernel, &row);
  iso.tolerance = row.tolerance;
  iso.metrics = row.metrics;
  iso.introduced = !row.within_tolerance;
  iso.reason = row.reason;
  return iso;
}

}  // namespace onnxprobe
