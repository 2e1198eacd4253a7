// Profile(request): ONNX Runtime's profiler over N runs, aggregated per node, op type and
// provider. The trace goes to a private temporary folder and is removed afterwards.
#include "onnxprobe/profile/profile.h"

#include <algorithm>
#include <string>
#include <vector>

#include "common/file_util.h"
#include "onnxprobe/backend/platform.h"
#include "profile/ort_trace.h"

namespace onnxprobe {
namespace {

// ONNX Runtime names a node it rewrote into the blocked channel layout after the tensor it makes,
// "<tensor>_nchwc". That tensor's producer in the model, and the nodes fused into the rewritten
// one back to a node of its op type (a Conv whose Relu was fused: its output is the Relu's).
std::vector<std::string> OriginalNodes(const GraphIndex& g, const std::string& node,
                                       const std::string& op_type) {
  static const std::string kSuffix = "_nchwc";
  if (node.size() <= kSuffix.size() ||
      node.compare(node.size() - kSuffix.size(), kSuffix.size(), kSuffix) != 0)
    return {};
  const TensorEntry* t = g.Find(node.substr(0, node.size() - kSuffix.size()));
  if (t == nullptr || t->producer < 0) return {};
  std::vector<int> chain{t->producer};
  for (int steps = 0; steps < 4 && g.nodes()[chain.back()].op_type != op_type; ++steps) {
    const NodeInfo& n = g.nodes()[chain.back()];
    const TensorEntry* in = n.inputs.empty() ? nullptr : g.Find(n.inputs[0]);
    if (in == nullptr || in->producer < 0) break;
    chain.push_back(in->producer);
  }
  if (g.nodes()[chain.back()].op_type != op_type) chain.resize(1);  // no fusion found: the producer
  std::vector<std::string> out;
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) out.push_back(g.nodes()[*it].name);
  return out;
}

}  // namespace

Expected<ProfileReport> Profile(const ProfileRequest& req) {
  OP_ASSIGN_OR_RETURN(Model model, Model::Load(req.model_path));
  InputPreparation prep;
  OP_ASSIGN_OR_RETURN(std::vector<NamedTensor> inputs, PrepareInputs(model, req.inputs, &prep));
  OP_ASSIGN_OR_RETURN(auto backend, LoadBackend(req.ort_library));
  ProfileReport report;
  report.model_path = req.model_path;
  report.runtime = RuntimeLabel(*backend);
  report.runtime_version = backend->version();
  // a plugin library's provider by its registered name (the report's, and the trace's)
  OP_ASSIGN_OR_RETURN(report.session, backend->ResolveProvider(req.session));
  report.notes = prep.notes;

  OP_ASSIGN_OR_RETURN(std::string dir, MakeTemporaryFolder("onnxprobe-profile"));
  SessionOptions options = report.session;
  options.profile_prefix = dir + "/trace";
  auto measured = MeasureLatency(model, *backend, options, inputs, req.runs, true);
  Expected<std::string> trace_path = measured.ok() ? (*measured).session->EndProfiling()
                                                   : Expected<std::string>(measured.status());
  if (measured.ok()) measured->session.reset();
  Expected<std::string> text =
      trace_path.ok() ? ReadFile(*trace_path) : Expected<std::string>(trace_path.status());
  RemoveTemporary(dir);
  OP_RETURN_IF_ERROR(text.status());
  if (!req.trace_output.empty()) OP_RETURN_IF_ERROR(WriteFileAtomic(req.trace_output, *text));
  report.latency = measured->latency;
  report.memory = measured->memory;
  OP_ASSIGN_OR_RETURN(auto runs, ParseOrtTrace(*text, "the runtime's profiler trace"));
  std::vector<std::string> names;  // topological order
  for (const NodeInfo& n : model.index().nodes()) names.push_back(n.name);
  OP_RETURN_IF_ERROR(AggregateTrace(runs, req.runs.warmup, names, &report));
  for (NodeProfile& p : report.nodes) {
    if (p.topo_index >= 0) continue;
    p.original_nodes = OriginalNodes(model.index(), p.node, p.op_type);
    if (p.original_nodes.empty()) continue;
    for (const NodeInfo& n : model.index().nodes()) {
      if (n.name == p.original_nodes.front()) p.topo_index = n.topo_index;
    }
    // they ran, as part of this node
    auto& nr = report.not_run;
    for (const auto& o : p.original_nodes) nr.erase(std::remove(nr.begin(), nr.end(), o), nr.end());
  }
  return report;
}

}  // namespace onnxprobe
