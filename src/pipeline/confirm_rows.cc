#include "pipeline/confirm_rows.h"

#include <unordered_map>
#include <unordered_set>

namespace onnxprobe {
namespace {

// Nodes from which `targets` can be reached (their producers and everything upstream).
std::unordered_set<int> Upstream(const GraphIndex& g, const std::vector<std::string>& targets) {
  std::unordered_set<int> seen;
  std::vector<int> todo;
  for (const auto& t : targets) {
    const TensorEntry* e = g.Find(t);
    if (e != nullptr && e->producer >= 0 && seen.insert(e->producer).second)
      todo.push_back(e->producer);
  }
  while (!todo.empty()) {
    int k = todo.back();
    todo.pop_back();
    for (const auto& in : g.nodes()[k].inputs) {
      const TensorEntry* e = in.empty() ? nullptr : g.Find(in);
      if (e != nullptr && e->producer >= 0 && seen.insert(e->producer).second)
        todo.push_back(e->producer);
    }
  }
  return seen;
}

}  // namespace

std::map<std::string, std::vector<std::string>> ConfirmingRows(
    const std::vector<AlignmentRow>& rows, const std::set<std::string>& advisory,
    const Model* graph) {
  std::map<std::pair<std::string, int>, std::vector<const AlignmentRow*>> outputs_of_call;
  std::unordered_map<std::string, const AlignmentRow*> structural;  // ONNX tensor -> row
  for (const auto& o : rows) {
    if (o.inside || o.onnx_tensor.empty() || advisory.count(o.torch_name)) continue;
    structural.emplace(o.onnx_tensor, &o);
    if (o.output_index >= 0) outputs_of_call[{o.module, o.call_index}].push_back(&o);
  }
  std::map<std::pair<std::string, int>, std::unordered_set<int>> upstream;  // per call
  std::map<std::string, std::vector<std::string>> confirm;
  for (const auto& row : rows) {
    if (!row.inside || row.onnx_tensor.empty()) continue;
    std::vector<std::string>& by = confirm[row.torch_name];
    auto it = outputs_of_call.find({row.module, row.call_index});
    if (it == outputs_of_call.end()) continue;
    std::vector<std::string> targets;
    for (const AlignmentRow* o : it->second) {
      by.push_back(o->torch_name);
      targets.push_back(o->onnx_tensor);
    }
    if (graph == nullptr) continue;
    const GraphIndex& g = graph->index();
    auto up = upstream.find(it->first);
    if (up == upstream.end()) up = upstream.emplace(it->first, Upstream(g, targets)).first;
    // forward from the value, within what reaches the call's outputs
    std::unordered_set<std::string> seen = {row.onnx_tensor};
    std::vector<std::string> todo = {row.onnx_tensor};
    std::unordered_set<std::string> outputs(targets.begin(), targets.end());
    while (!todo.empty()) {
      std::string t = todo.back();
      todo.pop_back();
      const TensorEntry* e = g.Find(t);
      if (e == nullptr || outputs.count(t)) continue;
      for (int k : e->consumers) {
        if (!up->second.count(k)) continue;
        for (const auto& o : g.nodes()[k].outputs) {
          if (o.empty() || !seen.insert(o).second) continue;
          todo.push_back(o);
          auto s = structural.find(o);
          if (s != structural.end() && !outputs.count(o)) by.push_back(s->second->torch_name);
        }
      }
    }
  }
  return confirm;
}

}  // namespace onnxprobe
