// FindPlacement: one profiled run with CPU fallback allowed; the trace says which provider ran
// each kernel.
#include "onnxprobe/profile/placement.h"

#include <algorithm>

#include "onnxprobe/profile/profile.h"

namespace onnxprobe {
namespace {

constexpr size_t kNamed = 8;  // nodes named in a description; the rest are counted

}  // namespace

Expected<Placement> FindPlacement(const std::string& model_path, const std::string& ort_library,
                                  const SessionOptions& session,
                                  const std::vector<NamedTensor>& inputs) {
  ProfileRequest req;
  req.model_path = model_path;
  req.ort_library = ort_library;
  req.session = session;
  req.session.allow_fallback = true;
  req.inputs.tensors = inputs;
  req.runs.runs = 1;
  req.runs.warmup = 0;
  OP_ASSIGN_OR_RETURN(ProfileReport r, Profile(req));
  OP_ASSIGN_OR_RETURN(Model model, Model::Load(model_path, LoadMode::kGraphOnly));
  Placement p;
  p.provider = FullProviderName(r.session.provider);  // as the runtime knows it
  p.model_nodes = model.index().nodes().size();
  for (const auto& n : r.nodes) {
    if (IsCpuProvider(n.provider)) {
      std::vector<std::string> names = n.original_nodes;
      if (names.empty()) names.push_back(n.node);
      for (const auto& x : names) {
        p.on_cpu.push_back(x + " (" + n.op_type + ")");
        p.on_cpu_nodes.push_back(x);
      }
    } else {
      p.partitions.push_back(n.node);
    }
  }
  return p;
}

std::string ProviderOfNode(const Placement& p, const std::string& node) {
  if (p.provider.empty()) return "";
  bool cpu = std::find(p.on_cpu_nodes.begin(), p.on_cpu_nodes.end(), node) != p.on_cpu_nodes.end();
  return cpu ? "CPUExecutionProvider" : p.provider;
}

std::string CpuNodeList(const Placement& p) {
  std::string s;
  for (size_t i = 0; i < p.on_cpu.size() && i < kNamed; ++i) s += (i ? ", " : "") + p.on_cpu[i];
  if (p.on_cpu.size() > kNamed) s += ", ... " + std::to_string(p.on_cpu.size() - kNamed) + " more";
  return s;
}

std::string DescribePlacement(const Placement& p) {
  size_t cpu = p.on_cpu.size();
  size_t on = p.model_nodes > cpu ? p.model_nodes - cpu : 0;
  std::string s = p.provider + " runs " + std::to_string(on) + " of " +
                  std::to_string(p.model_nodes) + " nodes (" + std::to_string(p.partitions.size()) +
                  (p.partitions.size() == 1 ? " kernel or compiled partition)"
                                            : " kernels or compiled partitions)");
  if (cpu == 0) return s;
  return s + "; the CPU provider runs " + std::to_string(cpu) + ": " + CpuNodeList(p);
}

}  // namespace onnxprobe
