// `inspect`'s console summary of a model.
#include "onnxprobe/report/model_summary_report.h"

#include "onnxprobe/common/format.h"

namespace onnxprobe {
namespace {

std::string OpsetString(const ModelSummary& s) {
  std::string out;
  for (const auto& o : s.opsets) {
    out += (out.empty() ? "" : ", ") + (o.domain.empty() ? std::string("ai.onnx") : o.domain) +
           " " + std::to_string(o.version);
  }
  return out;
}

}  // namespace

std::string RenderModelSummaryText(const Model& m, const FileHashes& h, bool tensors) {
  std::string out;
  const ModelSummary& s = m.summary();
  out += StringPrintf("model       %s (%s)\n", m.path().c_str(), FormatBytes(h.size).c_str());
  out += StringPrintf("ir_version  %lld\n", static_cast<long long>(s.ir_version));
  out += StringPrintf("opsets      %s\n", OpsetString(s).c_str());
  out += StringPrintf("producer    %s %s\n", s.producer_name.c_str(), s.producer_version.c_str());
  out += StringPrintf("md5         %s\nsha256      %s\n", h.md5.c_str(), h.sha256.c_str());
  out += StringPrintf("inputs\n");
  for (const auto& v : s.inputs)
    out += StringPrintf("  %-30s %s\n", v.name.c_str(), ValueInfoTypeString(v).c_str());
  out += StringPrintf("outputs\n");
  for (const auto& v : s.outputs)
    out += StringPrintf("  %-30s %s\n", v.name.c_str(), ValueInfoTypeString(v).c_str());
  out += StringPrintf("nodes       %zu\n", m.index().nodes().size());
  for (const auto& [op, n] : s.op_counts) out += StringPrintf("  %-20s %d\n", op.c_str(), n);
  out += StringPrintf("parameters  %llu in %zu initializers",
                      static_cast<unsigned long long>(s.param_count), s.initializers.size());
  if (s.constant_nodes > 0)
    out += StringPrintf(" and %zu Constant nodes (%llu of them)", s.constant_nodes,
                        static_cast<unsigned long long>(s.constant_param_count));
  out += StringPrintf(" (%s)\n", FormatBytes(s.param_bytes).c_str());
  for (const auto& w : m.checker_warnings()) out += StringPrintf("warning     %s\n", w.c_str());
  if (!tensors) return out;
  out += StringPrintf("\ntensors in topological order\n  %5s  %-12s  %-40s  %-16s  %s\n", "topo",
                      "kind", "tensor", "op", "node");
  for (const auto& t : m.index().tensors()) {
    std::string topo = "-", op = "", node = "";
    if (t.producer >= 0) {
      const NodeInfo& n = m.index().nodes()[t.producer];
      topo = std::to_string(n.topo_index);
      op = n.op_type;
      node = n.name;
    }
    if (t.subgraph_owner >= 0)
      node = "inside " + m.index().nodes()[t.subgraph_owner].name + " (not capturable)";
    out += StringPrintf("  %5s  %-12s  %-40s  %-16s  %s\n", topo.c_str(), TensorKindName(t.kind),
                        t.name.c_str(), op.c_str(), node.c_str());
  }
  return out;
}

}  // namespace onnxprobe
