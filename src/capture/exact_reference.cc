// PrepareExactReference (capture/exact_reference.h).
#include "onnxprobe/capture/exact_reference.h"

#include "onnxprobe/graph/graph.h"

namespace onnxprobe {
namespace {

// The node a runtime names when it has no kernel for it, from its message "Could not find an
// implementation for Erf(13) node with name 'gelu/erf'"; empty when the message is another.
std::string RefusedNode(const std::string& message) {
  const std::string head = "Could not find an implementation for ";
  const std::string with = " node with name '";
  size_t a = message.find(head);
  if (a == std::string::npos) return "";
  size_t b = message.find(with, a);
  if (b == std::string::npos) return "";
  b += with.size();
  size_t e = message.find('\'', b);
  return e == std::string::npos ? "" : message.substr(b, e - b);
}

// Tries a few times more than a model has ops without a float64 kernel.
constexpr int kMaxRefusals = 256;

}  // namespace

Expected<ExactReference> PrepareExactReference(const Model& model, const ExactOpener& open) {
  SessionOptions so;
  so.optimization_level = OptLevel::kDisabled;
  so.exact_kernels = true;
  std::set<std::string> float32;
  for (int attempt = 0;; ++attempt) {
    OP_ASSIGN_OR_RETURN(ExactModel built, BuildExactModel(model, float32));
    OP_ASSIGN_OR_RETURN(Model m, Model::Derived(model, built.bytes));
    Status opened = open(m, so);
    if (opened.ok()) {
      built.bytes.clear();
      return ExactReference{std::move(m), std::move(built), so};
    }
    std::string refused = RefusedNode(opened.message());
    if (refused.empty() || float32.count(refused) || attempt >= kMaxRefusals)
      return opened.WithContext("the float64 copy of " + model.path());
    float32.insert(refused);
  }
}

Expected<ExactReference> PrepareExactReference(const Model& model, Backend& backend) {
  // a session of it learns which kernels the runtime has (the weights are mapped, not copied)
  return PrepareExactReference(model, [&](const Model& m, const SessionOptions& so) -> Status {
    OP_ASSIGN_OR_RETURN(std::string bytes, MarkOutputs(m, {}));
    return backend.CreateSession(bytes, model.dir(), so).status();
  });
}

std::vector<std::string> DescribeInexactNodes(const ExactModel& m, size_t limit) {
  std::vector<std::string> out;
  size_t n = 0;
  for (const auto& x : m.nodes) {
    if (x.method != ExactMethod::kFloat32) continue;
    if (n++ < limit) out.push_back(x.node + " (" + x.op_type + "): in float32, " + x.why);
  }
  if (n > limit) out.push_back("... and " + std::to_string(n - limit) + " more in float32");
  return out;
}

}  // namespace onnxprobe
