// OP011: operators outside the ONNX domains. com.microsoft (ONNX Runtime's contrib operators)
// is info: it loads only in ONNX Runtime and only on providers with a kernel for it. Any other
// domain is a warning: it needs a custom-op library registered in every runtime that loads the
// model. Domains the model defines as local functions are expanded by the runtime and skipped.
// One finding per (domain, op type), on its first node.
#include <map>
#include <set>

#include "lint/rules.h"

namespace onnxprobe::lint {

void CheckCustomDomains(const LintContext& ctx, std::vector<LintFinding>* out) {
  std::set<std::pair<std::string, std::string>> functions;
  for (const auto& f : ctx.proto().functions()) functions.insert({f.domain(), f.name()});
  struct Group {
    const NodeInfo* first = nullptr;
    int count = 0;
  };
  std::map<std::pair<std::string, std::string>, Group> groups;
  std::vector<std::pair<std::string, std::string>> order;
  for (const NodeInfo& n : ctx.nodes()) {
    if (n.domain.empty() || n.domain == "ai.onnx" || n.domain == "ai.onnx.ml") continue;
    if (functions.count({n.domain, n.op_type})) continue;
    auto key = std::make_pair(n.domain, n.op_type);
    Group& g = groups[key];
    if (g.first == nullptr) {
      g.first = &n;
      order.push_back(key);
    }
    ++g.count;
  }
  for (const auto& key : order) {
    const Group& g = groups[key];
    const bool contrib = key.first == "com.microsoft";
    LintFinding f = MakeFinding(contrib ? LintSeverity::kInfo : LintSeverity::kWarning, g.first);
    f.message = std::to_string(g.count) + " node(s) of " + key.first + "." + key.second +
                " (first: " + NodeLabel(*g.first) + ")";
    if (contrib) {
      f.why =
          "an ONNX Runtime contrib operator: other runtimes (TensorRT standalone, OpenVINO, "
          "onnx.reference) cannot load it, and ONNX Runtime runs it only on providers that "
          "implement it, sometimes with other numerics than the unfused ops";
      f.fix =
          "fine for ONNX Runtime; for portability export without the fusion (optimize offline "
          "only for ONNX Runtime deployments)";
    } else {
      f.why =
          "no runtime knows this domain unless a custom-op library that implements it is "
          "registered; without it the model does not load, and each runtime's implementation "
          "is its own numerics";
      f.fix =
          "register the custom-op library (SessionOptions.register_custom_ops_library), or "
          "export the operator as standard ONNX ops (a symbolic function or an ONNX function)";
    }
    out->push_back(std::move(f));
  }
}

}  // namespace onnxprobe::lint
