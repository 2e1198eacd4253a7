#include <algorithm>
#include <cctype>
#include <set>
#include <unordered_map>

#include "align/call_graph.h"
#include "align/finalize.h"
#include "align/plan.h"
#include "align/torch_calls.h"
#include "common/decimal.h"
#include "onnxprobe/align/align.h"

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
  uint64_t k = 0;  // a suffix too long for an int is part of the name, not a call number
  if (!ParseDecimal(s.substr(us + 1), INT32_MAX, &k)) return {"", -1};
  return {s.substr(0, us), static_cast<int>(k)};
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
  align::TorchCalls calls = align::RebuildTorchCalls(torch_tensors);
  align::CallGraph graph(calls, onnx);
  std::vector<align::Plan> plans = align::PlanAlignment(calls, graph, onnx);
  for (auto& p : plans) {  // without values or types only a single candidate is decidable
    if (p.candidates.size() == 1) {
      p.chosen = p.candidates[0];
      p.confidence = 1;
    } else if (!p.candidates.empty()) {
      p.method = AlignMethod::kNone;
      p.note = std::to_string(p.candidates.size()) + " structural candidates (types unknown)";
    }
  }
  std::vector<bool> eligible;
  return align::Finalize(calls, graph, onnx, plans, &eligible);
}

}  // namespace onnxprobe
