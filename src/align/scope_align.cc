#include <algorithm>
#include <cctype>
#include <set>
#include <unordered_map>

#include "onnxprobe/align.h"

namespace onnxprobe {
namespace {

std::vector<std::string> Split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (char c : s) {
    if (c == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

// "relu_2" -> ("relu", 2); ("", -1) when there is no numeric suffix.
std::pair<std::string, int> CallSuffix(const std::string& s) {
  auto us = s.rfind('_');
  if (us == std::string::npos || us + 1 >= s.size()) return {"", -1};
  for (size_t i = us + 1; i < s.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(s[i]))) return {"", -1};
  }
  return {s.substr(0, us), std::stoi(s.substr(us + 1))};
}

bool StartsWith(const std::string& s, const std::string& p) {
  return s.compare(0, p.size(), p) == 0;
}

}  // namespace

std::string ScopeModulePath(const std::string& node_name, const std::vector<std::string>& modules,
                            int* call) {
  *call = 0;
  if (node_name.empty() || node_name[0] != '/') return "";
  std::vector<std::string> comps = Split(node_name.substr(1), '/');
  if (comps.size() < 2) return "";
  comps.pop_back();  // the op name ("Conv", "Relu_1")
  std::set<std::string> known(modules.begin(), modules.end());
  std::string path;
  for (size_t i = 0; i < comps.size(); ++i) {
    const std::string& c = comps[i];
    std::string full = path.empty() || StartsWith(c, path + ".") ? c : path + "." + c;
    if (i + 1 == comps.size() && !known.count(full)) {
      auto [base, k] = CallSuffix(c);
      if (k > 0) {
        std::string plain = path.empty() || StartsWith(base, path + ".") ? base : path + "." + base;
        if (known.count(plain)) {
          *call = k;
          full = plain;
        }
      }
    }
    path = full;
  }
  return path;
}

Alignment AlignByScope(const std::vector<SideTensor>& torch_tensors, const Model& onnx) {
  Alignment al;
  const GraphIndex& g = onnx.index();
  std::vector<std::string> modules;
  for (const auto& t : torch_tensors) {
    if (!t.module.empty()) modules.push_back(t.module);
  }
  // (module, call) -> nodes whose scope is exactly it; module prefixes collect subtrees
  std::map<std::pair<std::string, int>, std::vector<int>> exact;
  std::vector<std::pair<std::string, int>> scope_of(g.nodes().size());
  for (const auto& n : g.nodes()) {
    int call = 0;
    std::string path = ScopeModulePath(n.name, modules, &call);
    scope_of[n.topo_index] = {path, call};
    if (!path.empty()) exact[{path, call}].push_back(n.topo_index);
  }
  auto in_subtree = [&](int k, const std::string& module, int call) {
    const auto& [p, c] = scope_of[k];
    if (p == module) return c == call;
    return call == 0 && StartsWith(p, module + ".");
  };
  // tensors a set of nodes hands to the rest of the graph, in topological order
  auto escaping = [&](const std::string& module, int call) {
    std::vector<std::string> outs;
    for (const auto& n : g.nodes()) {
      if (!in_subtree(n.topo_index, module, call)) continue;
      for (const auto& o : n.outputs) {
        const TensorEntry* e = g.Find(o);
        if (e == nullptr) continue;
        bool escapes = e->kind == TensorKind::kGraphOutput;
        for (int c : e->consumers) escapes = escapes || !in_subtree(c, module, call);
        if (escapes) outs.push_back(o);
      }
    }
    return outs;
  };
  std::vector<std::string> graph_outputs;
  for (const auto& o : onnx.summary().outputs) graph_outputs.push_back(o.name);

  std::map<std::pair<std::string, int>, int> outputs_per_call;
  for (const auto& t : torch_tensors) ++outputs_per_call[{t.module, t.call_index}];
  std::unordered_map<std::string, size_t> row_of_module_call;
  for (const auto& t : torch_tensors) {
    AlignmentRow row;
    row.torch_name = t.name;
    row.module = t.module;
    row.module_type = t.module_type;
    row.call_index = t.call_index;
    row.output_index = t.output_index;
    row.method = "none";
    bool root = t.module.find('.') == std::string::npos &&
                t.topo_index == static_cast<int>(torch_tensors.size()) - 1;
    std::vector<std::string> outs = escaping(t.module, t.call_index);
    bool has_exact = exact.count({t.module, t.call_index}) > 0;
    if (root && outs.empty() && t.output_index < static_cast<int>(graph_outputs.size())) {
      row.onnx_tensor = graph_outputs[t.output_index];
      row.method = "scope";
      row.note = "the model's output";
    } else if (!outs.empty()) {
      // a module's output is the last tensor its subtree hands on; tuple outputs by position
      size_t j = outs.size() - 1;
      bool tuple = outputs_per_call[{t.module, t.call_index}] > 1;
      if (tuple && static_cast<size_t>(t.output_index) < outs.size()) j = t.output_index;
      row.onnx_tensor = outs[j];
      row.method = has_exact ? "scope" : "container";
      row.confidence = 1;
    } else {
      row.note = "no ONNX nodes in scope '" + t.module + "'";
    }
    row.confidence = row.onnx_tensor.empty() ? 0 : 1;
    row_of_module_call[t.module + "#" + std::to_string(t.call_index) + ":" +
                       std::to_string(t.output_index)] = al.rows.size();
    al.rows.push_back(std::move(row));
  }
  // BatchNorm folded into the preceding Conv (eval-mode export with constant folding): the BN
  // output is what the ONNX Conv produces; the pre-BN activation has no counterpart.
  for (size_t i = 1; i < al.rows.size(); ++i) {
    AlignmentRow& bn = al.rows[i];
    if (bn.module_type.find("BatchNorm") == std::string::npos || !bn.onnx_tensor.empty()) continue;
    for (size_t j = i; j-- > 0;) {
      AlignmentRow& conv = al.rows[j];
      if (conv.module_type.find("Conv") == std::string::npos) continue;
      if (conv.onnx_tensor.empty()) break;
      bn.onnx_tensor = conv.onnx_tensor;
      bn.method = "bn-folded";
      bn.confidence = 1;
      bn.note = "BatchNorm folded into " + conv.module;
      conv.note = "fused with " + bn.module + ": the pre-BatchNorm activation has no counterpart";
      conv.onnx_tensor.clear();
      conv.method = "none";
      conv.confidence = 0;
      break;
    }
  }
  // containers whose output is their last child's: keep the innermost module's row only
  std::map<std::string, size_t> claimed;
  for (size_t i = 0; i < al.rows.size(); ++i) {
    const AlignmentRow& r = al.rows[i];
    if (r.onnx_tensor.empty()) continue;
    auto it = claimed.find(r.onnx_tensor);
    if (it == claimed.end()) {
      claimed[r.onnx_tensor] = i;
      continue;
    }
    AlignmentRow& prev = al.rows[it->second];
    // hooks fire innermost first: keep the earlier (inner) row, note the outer one
    AlignmentRow& outer = al.rows[i];
    outer.note = "same tensor as " + prev.torch_name + " (its last child)";
    outer.method = "container";
  }
  for (const auto& r : al.rows) {
    if (!r.onnx_tensor.empty()) al.rename[r.torch_name] = r.onnx_tensor;
  }
  return al;
}

}  // namespace onnxprobe
