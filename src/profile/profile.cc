// Profile(request): ONNX Runtime's profiler over N runs, aggregated per node, op type and
// provider. The trace goes to a private temporary folder and is removed afterwards.
#include "onnxprobe/profile.h"

#include "common/file_util.h"
#include "profile/ort_trace.h"

namespace onnxprobe {

Expected<ProfileReport> Profile(const ProfileRequest& req) {
  OP_ASSIGN_OR_RETURN(Model model, Model::Load(req.model_path));
  InputPreparation prep;
  OP_ASSIGN_OR_RETURN(std::vector<NamedTensor> inputs, PrepareInputs(model, req.inputs, &prep));
  OP_ASSIGN_OR_RETURN(auto backend, LoadOrtBackend(req.ort_library));
  ProfileReport report;
  report.model_path = req.model_path;
  report.runtime = "onnxruntime " + backend->version();
  report.runtime_version = backend->version();
  report.session = req.session;
  report.notes = prep.notes;

  OP_ASSIGN_OR_RETURN(std::string dir, MakeTemporaryFolder("onnxprobe-profile"));
  SessionOptions options = req.session;
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
  return report;
}

}  // namespace onnxprobe
