// `onnxprobe run` as one library call (CaptureToDump): the command line only parses and prints.
#include <algorithm>
#include <chrono>
#include <future>

#include "onnxprobe/backend/backend.h"
#include "onnxprobe/backend/platform.h"
#include "onnxprobe/capture/branches.h"
#include "onnxprobe/capture/dump.h"
#include "onnxprobe/capture/exact_reference.h"
#include "onnxprobe/model/model.h"

namespace onnxprobe {
namespace {

// Passes tensors on to the dump writer, noting those that hold NaN or Inf on the way (they
// arrive in topological order, so the first noted is the first in the graph).
class NonfiniteScan : public CaptureSink {
 public:
  NonfiniteScan(CaptureSink& next, DumpReport& report) : next_(next), report_(report) {}
  void Check(const std::string& name, const Tensor& t, const CapturedTensor* c) {
    if (t.empty() || !IsFloating(t.dtype())) return;
    TensorStats s = ComputeStats(t);
    if (s.nan_count + s.inf_count == 0) return;
    ++report_.nonfinite_tensors;
    if (report_.first_nonfinite) return;
    NonfiniteTensor n;
    n.name = name;
    n.is_input = c == nullptr;
    if (c != nullptr) {
      n.node = c->node_name;
      n.op_type = c->op_type;
      n.topo_index = c->topo_index;
    }
    n.elements = t.num_elements();
    n.nan_count = s.nan_count;
    n.inf_count = s.inf_count;
    report_.first_nonfinite = std::move(n);
  }
  Status Consume(CapturedTensor&& t) override {
    Check(t.name, t.tensor, &t);
    return next_.Consume(std::move(t));
  }

 private:
  CaptureSink& next_;
  DumpReport& report_;
};

}  // namespace

Expected<DumpReport> CaptureToDump(const DumpRequest& req, InputPreparation* prep) {
  InputPreparation ignored;
  if (prep == nullptr) prep = &ignored;
  ScopedAllocationLimit budget(req.capture.max_memory);
  OP_ASSIGN_OR_RETURN(Model file_model, Model::Load(req.model_path));
  OP_ASSIGN_OR_RETURN(std::vector<NamedTensor> inputs, PrepareInputs(file_model, req.inputs, prep));
  OP_ASSIGN_OR_RETURN(auto backend, LoadBackend(req.ort_library));
  CaptureOptions capture = req.capture;
  // a plugin library's provider by its registered name (the manifest's, and every check below)
  OP_ASSIGN_OR_RETURN(capture.session, backend->ResolveProvider(capture.session));
  std::optional<ExactReference> exact;
  if (req.exact) {
    if (!IsCpuProvider(capture.session.provider))
      return InvalidArgument("the float64 reference runs on the CPU provider, not " +
                             capture.session.provider);
    OP_ASSIGN_OR_RETURN(ExactReference x, PrepareExactReference(file_model, *backend));
    capture.session = x.session;
    capture.check_observer = false;  // no float32 run to compare it with
    exact = std::move(x);
  }
  // If nodes run as the branch they take on these inputs: the branch's tensors are captured
  OP_ASSIGN_OR_RETURN(TakenBranches branches, TakeBranches(exact ? exact->model : file_model,
                                                           *backend, capture.session, inputs));
  const Model& model = branches.model;
  auto selected = SelectTensors(model, req.selection);
  if (exact && selected.ok()) {  // the original model's tensors, not the float64 copy's helpers
    auto& names = *selected;
    names.erase(std::remove_if(names.begin(), names.end(), IsExactHelperTensor), names.end());
  }
  if (!selected.ok() && selected.status().code() == ErrorCode::kNotFound) {
    // a tensor of a branch not taken is no longer in the model run: the file says where it is
    Status in_file = SelectTensors(file_model, req.selection).status();
    if (!in_file.ok()) return in_file;
  }
  OP_ASSIGN_OR_RETURN(std::vector<std::string> tensors, std::move(selected));
  // the model hash is for the manifest only: compute it on the other core while the model runs
  auto hashes = std::async(std::launch::async, [&] { return model.Hashes(false); });

  DumpReport report;
  report.notes = prep->notes;
  report.notes.insert(report.notes.end(), branches.notes.begin(), branches.notes.end());
  if (exact) {
    report.notes.push_back(exact->built.Summary());
    for (const auto& n : DescribeInexactNodes(exact->built)) report.notes.push_back(n);
    report.exact = exact->built;
  }
  DumpMetadata& meta = report.metadata;
  meta.model_path = req.model_path;
  meta.runtime = RuntimeLabel(*backend);
  if (!backend->platform().empty()) meta.runtime += " on " + backend->platform();
  meta.runtime_version = backend->version();
  meta.provider = capture.session.provider;
  meta.optimization_level = req.capture.session.optimization_level;
  meta.seed = req.inputs.seed;
  if (exact) meta.settings.push_back({"precision", "float64"});
  auto t0 = std::chrono::steady_clock::now();
  auto writer = DumpWriter::Create(req.output, meta);
  Status st = writer.status();
  for (size_t i = 0; st.ok() && i < inputs.size(); ++i) st = (*writer)->AddInput(inputs[i]);
  Expected<CaptureReport> captured = st;
  if (st.ok()) {
    NonfiniteScan scan(**writer, report);
    if (req.find_nonfinite) {
      for (const auto& in : inputs) scan.Check(in.name, in.tensor, nullptr);
    }
    CaptureSink& sink = req.find_nonfinite ? static_cast<CaptureSink&>(scan) : **writer;
    captured = Capture(model, *backend, inputs, tensors, capture, sink, req.on_progress);
  }
  std::string sha256 = hashes.get().sha256;  // joined before any return: it reads `model`
  if (!captured.ok()) return captured.status();
  report.capture = std::move(*captured);
  meta.model_sha256 = sha256;
  (*writer)->set_model_sha256(sha256);
  OP_RETURN_IF_ERROR((*writer)->Finish(report.capture));
  report.bytes_written = (*writer)->bytes_written();
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return report;
}

}  // namespace onnxprobe
