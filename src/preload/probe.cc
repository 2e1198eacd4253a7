// Probe: per-run capture of an application's session through a shadow session.
#include "onnxprobe/preload/probe.h"

#include <algorithm>
#include <chrono>

namespace onnxprobe {
Probe::~Probe() = default;

Expected<std::unique_ptr<Probe>> Probe::Attach(const std::string& model_path,
                                               const ProbeOptions& options, ProbeFault* fault) {
  ProbeFault ignored;
  if (fault == nullptr) fault = &ignored;
  std::unique_ptr<Probe> p(new Probe());
  p->options_ = options;
  *fault = ProbeFault::kModel;
  OP_ASSIGN_OR_RETURN(Model model, Model::Load(model_path));
  p->model_ = std::make_unique<Model>(std::move(model));
  *fault = ProbeFault::kSelection;
  OP_ASSIGN_OR_RETURN(p->selected_, SelectTensors(*p->model_, options.selection));
  *fault = ProbeFault::kRuntime;
  OP_ASSIGN_OR_RETURN(p->backend_, LoadOrtBackend(options.ort_library));
  *fault = ProbeFault::kNone;
  p->sha256_ = p->model_->Hashes(false).sha256;
  return p;
}

std::string Probe::runtime_version() const { return backend_->version(); }

// On the first run: which selected tensors the optimized graph keeps, whether the selection
// fits the memory budget at these input shapes, and the reused shadow session when it does.
Status Probe::Prepare(const std::vector<NamedTensor>& inputs, ProbeFault* fault) {
  *fault = ProbeFault::kRuntime;
  std::vector<std::string> graph_outputs;
  for (const auto& o : model_->summary().outputs) graph_outputs.push_back(o.name);
  tensors_ = selected_;
  if (options_.session.optimization_level > OptLevel::kDisabled) {
    OP_ASSIGN_OR_RETURN(auto present, OptimizedGraphTensors(*model_, *backend_, options_.session,
                                                            options_.max_memory));
    tensors_.clear();
    for (const auto& n : selected_) {
      bool output = std::find(graph_outputs.begin(), graph_outputs.end(), n) != graph_outputs.end();
      (output || present.count(n) ? tensors_ : fused_).push_back(n);
    }
  }
  if (options_.max_memory > 0) {
    auto sizes = EstimateTensorBytes(*model_, inputs);
    *fault = ProbeFault::kMemoryBudget;
    uint64_t total = 0;
    bool unknown = false;  // a size inference cannot tell: plan batches run by run
    for (const auto& n : tensors_) {
      auto it = sizes.find(n);
      if (it == sizes.end()) {
        unknown = true;
        continue;
      }
      if (it->second > options_.max_memory) {
        return InvalidArgument("memory budget of " + std::to_string(options_.max_memory) +
                               " bytes is smaller than tensor '" + n + "' (" +
                               std::to_string(it->second) + " bytes)");
      }
      total += it->second;
    }
    batched_ = total > options_.max_memory || unknown;
  }
  *fault = ProbeFault::kRuntime;
  if (!batched_) {
    OP_ASSIGN_OR_RETURN(shadow_,
                        CaptureSession::Create(*model_, *backend_, tensors_, options_.session));
  }
  prepared_ = true;
  *fault = ProbeFault::kNone;
  return Status::Ok();
}

Status Probe::WriteCaptured(DumpWriter& writer, CaptureReport* report) {
  const GraphIndex& idx = model_->index();
  const auto& outs = shadow_->outputs();
  for (size_t i = 0; i < tensors_.size() && i < outs.size(); ++i) {
    CapturedTensor c;
    c.name = outs[i].name;
    if (const TensorEntry* t = idx.Find(c.name); t != nullptr && t->producer >= 0) {
      const NodeInfo& node = idx.nodes()[t->producer];
      c.topo_index = node.topo_index;
      c.node_name = node.name;
      c.op_type = node.op_type;
    }
    c.tensor = outs[i].tensor;  // shares the reused buffer: written before the next run
    c.skipped = outs[i].skipped;
    if (c.skipped.empty()) {
      ++report->captured;
    } else {
      report->skipped.push_back({c.name, c.skipped});
    }
    OP_RETURN_IF_ERROR(writer.Consume(std::move(c)));
  }
  return Status::Ok();
}

Expected<ProbeRunReport> Probe::CaptureRun(const std::vector<NamedTensor>& inputs,
                                           const std::string& dump_path, ProbeFault* fault) {
  ProbeFault ignored;
  if (fault == nullptr) fault = &ignored;
  std::lock_guard<std::mutex> lock(mu_);
  auto t0 = std::chrono::steady_clock::now();
  if (!prepared_) OP_RETURN_IF_ERROR(Prepare(inputs, fault));
  *fault = ProbeFault::kOutput;
  DumpMetadata meta;
  meta.model_path = model_->path();
  meta.model_sha256 = sha256_;
  meta.runtime = RuntimeLabel(*backend_);
  meta.runtime_version = backend_->version();
  meta.provider = options_.session.provider;
  meta.optimization_level = options_.session.optimization_level;
  meta.settings = options_.recorded_settings;
  OP_ASSIGN_OR_RETURN(auto writer, DumpWriter::Create(dump_path, meta));
  for (const auto& in : inputs) OP_RETURN_IF_ERROR(writer->AddInput(in));
  ProbeRunReport out;
  *fault = ProbeFault::kRuntime;
  if (batched_) {
    CaptureOptions co;
    co.session = options_.session;
    co.max_memory = options_.max_memory;
    OP_ASSIGN_OR_RETURN(out.capture, Capture(*model_, *backend_, inputs, selected_, co, *writer));
  } else {
    OP_RETURN_IF_ERROR(shadow_->Run(inputs).WithContext(model_->path()));
    out.capture.runs = 1;
    out.capture.fused = fused_;
    *fault = ProbeFault::kOutput;
    OP_RETURN_IF_ERROR(WriteCaptured(*writer, &out.capture));
  }
  *fault = ProbeFault::kOutput;
  OP_RETURN_IF_ERROR(writer->Finish(out.capture));
  *fault = ProbeFault::kNone;
  out.bytes_written = writer->bytes_written();
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace onnxprobe
