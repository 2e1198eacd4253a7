#include "onnxprobe/side/side.h"

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <future>
#include <map>
#include <set>

#include "onnxprobe/backend/platform.h"
#include "onnxprobe/capture/branches.h"
#include "onnxprobe/capture/capture.h"
#include "onnxprobe/capture/dump.h"
#include "onnxprobe/graph/graph.h"
#include "onnxprobe/tensor/npy.h"
#include "side/live_info.h"

namespace fs = std::filesystem;

namespace onnxprobe {

const char* SideKindName(SideKind k) {
  switch (k) {
    case SideKind::kLive:
      return "live";
    case SideKind::kDump:
      return "dump";
    case SideKind::kTorchCapture:
      return "torch-capture";
  }
  return "?";
}

std::string Side::Describe() const {
  const SideInfo& i = info();
  std::string rt = i.runtime.empty() ? "" : " (" + i.runtime + ")";
  switch (i.kind) {
    case SideKind::kTorchCapture:
      return "PyTorch capture " + i.path + rt;
    case SideKind::kDump:
      return "dump " + i.path + rt;
    case SideKind::kLive:
      break;
  }
  return i.path + " on " + i.runtime + " " + i.provider +
         (i.platform.empty() ? "" : " on " + i.platform) + ", optimizations " +
         OptLevelName(i.optimization_level);
}

SessionOptions LiveSessionOptions(const SessionOptions& side) {
  SessionOptions o = side;
  o.config_entries.emplace("session.force_spinning_stop", "1");
  return o;
}

SideInfo LiveSideInfo(const std::string& model_path, const std::string& runtime_version,
                      const std::string& runtime_library, const SessionOptions& options) {
  SideInfo info;
  info.kind = SideKind::kLive;
  info.path = model_path;
  info.runtime = OrtRuntimeLabel(runtime_version);
  info.runtime_version = runtime_version;
  info.runtime_library = runtime_library;
  info.provider = options.provider;
  info.provider_options = options.provider_options;
  info.optimization_level = options.optimization_level;
  info.sequential = options.sequential;
  info.intra_op_threads = options.intra_op_threads;
  info.inter_op_threads = options.inter_op_threads;
  return info;
}

namespace {

class LiveSide : public Side {
 public:
  LiveSide(Model model, std::shared_ptr<Backend> backend, SessionOptions options, bool keep_session,
           bool hold_session, bool mark_fused, uint64_t max_memory)
      : model_(std::move(model)),
        original_(model_),
        backend_(std::move(backend)),
        options_(std::move(options)),
        keep_session_(keep_session),
        hold_session_(hold_session && !keep_session),
        mark_fused_(mark_fused),
        max_memory_(max_memory) {
    info_ = LiveSideInfo(model_.path(), backend_->version(), backend_->library_path(), options_);
    info_.platform = backend_->platform();
    // the hash is for reports only: compute it on another core while the runs go on
    hash_ = std::async(std::launch::async, [m = model_] { return m.Hashes(false).sha256; }).share();
    ListTensors();
  }

  // The capturable tensors of the model the side runs now (the file's, or with If nodes inlined).
  void ListTensors() {
    tensors_.clear();
    hidden_.clear();
    const GraphIndex& idx = model_.index();
    // Values fixed by the model alone (a Constant, an Identity or Transpose of a weight) are the
    // same computation on every provider, and compiling providers fold them: OpenVINO 1.24 makes
    // ONNX Runtime reject the graph when a Constant's output is marked as an output ("Duplicate
    // definition") and returns zeros for an Identity of a weight marked so. On any provider but
    // CPU they are not captured.
    std::set<std::string> fixed;
    if (!IsCpuProvider(options_.provider)) fixed = TensorsFixedByModel(idx);
    for (const auto& t : idx.tensors()) {
      if (t.kind != TensorKind::kIntermediate && t.kind != TensorKind::kGraphOutput) continue;
      const NodeInfo& n = idx.nodes()[t.producer];
      if (t.kind == TensorKind::kIntermediate && fixed.count(t.name)) {
        hidden_.push_back(t.name);
        continue;
      }
      SideTensor st;
      st.name = t.name;
      st.node = n.name;
      st.op_type = n.op_type;
      st.topo_index = n.topo_index;
      st.is_graph_output = t.kind == TensorKind::kGraphOutput;
      tensors_.push_back(std::move(st));
    }
  }

  const SideInfo& info() const override {
    if (info_.model_sha256.empty() && hash_.valid()) info_.model_sha256 = hash_.get();
    return info_;
  }
  const std::vector<SideTensor>& tensors() const override { return tensors_; }
  const Model* model() const override { return &model_; }
  Expected<std::vector<NamedTensor>> RecordedInputs() const override {
    return std::vector<NamedTensor>();
  }
  size_t runs() const override { return runs_; }

  Status SetInputs(const std::vector<NamedTensor>& inputs) override {
    const auto& declared = model_.summary().inputs;
    for (const auto& d : declared) {
      auto it = std::find_if(inputs.begin(), inputs.end(),
                             [&](const NamedTensor& n) { return n.name == d.name; });
      if (it == inputs.end()) {
        return InvalidArgument(model_.path() + " needs input '" + d.name + "' " +
                               ValueInfoTypeString(d) + " that the other side does not provide");
      }
      auto dt = DTypeFromOnnx(d.elem_type);
      if (dt.ok() && *dt != it->tensor.dtype()) {
        return InvalidArgument(model_.path() + ": input '" + d.name + "' is " + DTypeName(*dt) +
                               " but the shared input is " + DTypeName(it->tensor.dtype()));
      }
      bool shape_ok = !d.has_shape || d.dims.size() == it->tensor.shape().size();
      for (size_t k = 0; shape_ok && d.has_shape && k < d.dims.size(); ++k) {
        shape_ok = d.dims[k].value < 0 || d.dims[k].value == it->tensor.shape()[k];
      }
      if (!shape_ok) {
        return InvalidArgument(model_.path() + ": input '" + d.name + "' is " +
                               ValueInfoTypeString(d) + " but the shared input is " +
                               ShapeToString(it->tensor.shape()) + " (the sides' inputs differ)");
      }
    }
    for (const auto& in : inputs) {
      bool known = std::any_of(declared.begin(), declared.end(),
                               [&](const ValueInfo& d) { return d.name == in.name; });
      if (!known)
        return InvalidArgument(model_.path() + " has no input '" + in.name +
                               "' (the sides' inputs differ)");
    }
    inputs_ = &inputs;
    OP_RETURN_IF_ERROR(InlineTakenBranches(inputs));
    if (options_.optimization_level > OptLevel::kDisabled && !mark_fused_ && !exposed_) {
      OP_RETURN_IF_ERROR(ExposeOptimizedOnly());
      exposed_ = true;
    }
    if (!IsCpuProvider(options_.provider) && !compilable_) {
      OP_RETURN_IF_ERROR(ExposeCompilable());
      compilable_ = true;
    }
    auto sizes = EstimateTensorBytes(model_, inputs);
    for (auto& t : tensors_) {
      auto it = sizes.find(t.name);
      t.est_bytes = it == sizes.end() ? 0 : it->second;
    }
    return Status::Ok();
  }

  SessionOptions session_options() const override { return options_; }
  const std::vector<std::string>& hidden() const override { return hidden_; }

  // Keeps the tensors that exist in the runtime's optimized graph (same names: a fused node
  // keeps its last output's name); the others are hidden, not captured. Tensors the runtime keeps
  // in its blocked layout are kept when marking them blocks no fusion: without a memory budget,
  // the session that captures every kept tensor is made now and its own graph confirms them
  // (held for the fetches it covers; it lives while side A runs: ResNet-50, 0.30 -> 0.34 GB
  // peak); else sessions of their own confirm them.
  Status ExposeOptimizedOnly() {
    std::vector<std::string> names;
    for (const auto& t : tensors_) names.push_back(t.name);
    SessionOptions capture = SessionRunOptions();
    bool one_session = max_memory_ == 0 && !keep_session_;
    OP_ASSIGN_OR_RETURN(KeptTensors k, KeptForCapture(model_, *backend_, options_, max_memory_,
                                                      names, one_session ? &capture : nullptr));
    if (k.session != nullptr) {
      eager_ = std::move(k.session);
      eager_names_ = k.kept;
    }
    std::vector<SideTensor> kept;
    for (auto& t : tensors_) {
      if (k.kept.count(t.name))
        kept.push_back(std::move(t));
      else
        hidden_.push_back(t.name);
    }
    tensors_ = std::move(kept);
    return Status::Ok();
  }

  // On a provider other than CPU, marking a tensor as an output can change what the provider
  // compiles so that compiling fails (it cannot give a value from inside what it fuses). The
  // session with every tensor marked is made now (the first fetch that it covers takes it); when
  // it fails and the model alone compiles, the tensors whose marking breaks it are found by
  // halving and hidden, and the side is compared at the values the provider can give.
  Status ExposeCompilable() {
    std::vector<std::string> inner;  // graph outputs are outputs either way
    for (const auto& t : tensors_)
      if (!t.is_graph_output) inner.push_back(t.name);
    if (inner.empty() || eager_ != nullptr) return Status::Ok();  // eager: they compiled
    SessionOptions o = SessionRunOptions();
    auto all = OpenMarkedSession(model_, *backend_, inner, o);
    if (all.ok()) {
      if (max_memory_ == 0 && !keep_session_) {
        eager_ = std::move(*all);
        for (const auto& t : tensors_) eager_names_.insert(t.name);
      }
      return Status::Ok();
    }
    OP_ASSIGN_OR_RETURN(auto refused,
                        TensorsBreakingCompilation(model_, *backend_, inner, o, all.status()));
    std::set<std::string> hide(refused.begin(), refused.end());
    std::vector<SideTensor> kept;
    for (auto& t : tensors_) {
      if (hide.count(t.name))
        hidden_.push_back(t.name);
      else
        kept.push_back(std::move(t));
    }
    tensors_ = std::move(kept);
    info_.notes.push_back(DescribeUnmarkable(refused, inner.size(), options_.provider));
    return Status::Ok();
  }

  Expected<std::vector<RunOutput>> RunOther(
      const std::string& bytes, const std::string& dir,
      const std::vector<std::pair<std::string, const Tensor*>>& inputs,
      const std::vector<std::string>& outputs) override {
    OP_ASSIGN_OR_RETURN(auto session, backend_->CreateSession(bytes, dir, SessionRunOptions()));
    return session->Run(inputs, outputs);
  }

  Expected<std::vector<RunOutput>> Fetch(const std::vector<std::string>& names) override {
    if (inputs_ == nullptr)
      return InvalidArgument("live side " + model_.path() + " has no inputs set");
    std::vector<std::pair<std::string, const Tensor*>> refs;
    for (const auto& nt : *inputs_) refs.emplace_back(nt.name, &nt.tensor);
    if (hold_session_ && held_ == nullptr && TakeEager(names, &held_))
      held_marked_ = std::move(eager_names_);
    if (hold_session_ && (held_ == nullptr || Covers(held_marked_, names))) {
      if (held_ == nullptr) {
        OP_ASSIGN_OR_RETURN(held_, CaptureSession(names));
        held_marked_ = std::set<std::string>(names.begin(), names.end());
      }
      ++runs_;
      auto r = held_->Run(refs, names);
      if (!r.ok()) return r.status().WithContext(model_.path());
      return r;
    }
    if (session_ == nullptr || names != session_names_) {
      session_.reset();
      reused_.clear();
      if (!TakeEager(names, &session_)) {
        OP_ASSIGN_OR_RETURN(session_, CaptureSession(names));
      }
      session_names_ = names;
    }
    ++runs_;
    if (keep_session_) {
      // repeated fetches of one set: I/O binding into buffers reused run after run (no fresh
      // allocations); the tensors handed out are overwritten by the next fetch
      Status st = session_->RunInto(refs, names, &reused_);
      if (!st.ok()) return st.WithContext(model_.path());
      return reused_;
    }
    auto r = session_->Run(refs, names);
    session_.reset();  // outputs keep their own buffers alive
    if (!r.ok()) return r.status().WithContext(model_.path());
    return r;
  }

 private:
  static bool Covers(const std::set<std::string>& marked, const std::vector<std::string>& names) {
    return std::all_of(names.begin(), names.end(),
                       [&](const std::string& n) { return marked.count(n) > 0; });
  }

  // Moves the session made while exposing into `*to` when it has every one of `names` as an
  // output; a fetch it does not cover drops it (one full session at a time).
  bool TakeEager(const std::vector<std::string>& names, std::unique_ptr<BackendSession>* to) {
    if (eager_ == nullptr) return false;
    bool covers = Covers(eager_names_, names);
    if (covers) *to = std::move(eager_);
    eager_.reset();
    if (!covers) eager_names_.clear();
    return covers;
  }

  // A session of the model with `names` marked as outputs.
  Expected<std::unique_ptr<BackendSession>> CaptureSession(const std::vector<std::string>& names) {
    return OpenMarkedSession(model_, *backend_, names, SessionRunOptions());
  }

  SessionOptions SessionRunOptions() const { return LiveSessionOptions(options_); }

  // If nodes: the branch each takes for these inputs replaces it (capture/branches.h), so what
  // the branch computes is captured, compared and isolated; the notes say what was done.
  Status InlineTakenBranches(const std::vector<NamedTensor>& inputs) {
    OP_ASSIGN_OR_RETURN(TakenBranches b,
                        TakeBranches(original_, *backend_, SessionRunOptions(), inputs));
    info_.notes = b.notes;
    // the model already runs these branches and iteration counts
    if (b.taken == taken_ && b.iterations == iterations_) return Status::Ok();
    taken_ = std::move(b.taken);
    iterations_ = std::move(b.iterations);
    info_.inlined_ifs = std::move(b.inlined);
    info_.unrolled_loops = std::move(b.unrolled);
    model_ = std::move(b.model);
    session_.reset();
    held_.reset();
    eager_.reset();
    exposed_ = false;
    ListTensors();
    return Status::Ok();
  }

  Model model_;
  Model original_;                     // the file's model (model_ may have If nodes inlined)
  std::map<std::string, bool> taken_;  // the If conditions model_ was inlined for
  std::map<std::string, int64_t> iterations_;  // the loop counts it was unrolled for
  std::shared_ptr<Backend> backend_;
  SessionOptions options_;
  bool keep_session_ = false;
  bool hold_session_ = false;
  std::unique_ptr<BackendSession> held_;
  std::set<std::string> held_marked_;      // the held session's outputs
  std::unique_ptr<BackendSession> eager_;  // made while exposing (ExposeOptimizedOnly)
  std::set<std::string> eager_names_;
  mutable SideInfo info_;
  std::shared_future<std::string> hash_;
  std::vector<SideTensor> tensors_;
  const std::vector<NamedTensor>* inputs_ = nullptr;
  std::unique_ptr<BackendSession> session_;
  std::vector<std::string> session_names_;
  std::vector<RunOutput> reused_;
  size_t runs_ = 0;
  bool mark_fused_ = false, exposed_ = false, compilable_ = false;
  uint64_t max_memory_ = 0;
  std::vector<std::string> hidden_;
};

class DumpSide : public Side {
 public:
  explicit DumpSide(std::unique_ptr<DumpReader> r) : reader_(std::move(r)) {
    const DumpMetadata& m = reader_->metadata();
    info_.kind = m.source == kTorchCaptureSource ? SideKind::kTorchCapture : SideKind::kDump;
    info_.path = reader_->path();
    info_.model_sha256 = m.model_sha256;
    info_.runtime = m.runtime;
    info_.runtime_version = m.runtime_version;
    info_.provider = m.provider;
    info_.optimization_level = m.optimization_level;
    for (const auto& e : reader_->entries()) {
      if (e.kind != DumpEntryKind::kTensor) continue;
      uint64_t bytes = 0;
      auto b = NumBytes(e.dtype, e.shape);
      if (b.ok()) bytes = *b;
      tensors_.push_back({e.name, e.node, e.op_type, e.topo_index, bytes, false, e.module,
                          e.module_type, e.call_index, e.output_index, e.float64_error});
    }
    std::stable_sort(
        tensors_.begin(), tensors_.end(),
        [](const SideTensor& x, const SideTensor& y) { return x.topo_index < y.topo_index; });
  }
  const SideInfo& info() const override { return info_; }
  const std::vector<SideTensor>& tensors() const override { return tensors_; }
  const Model* model() const override { return nullptr; }
  Status SetInputs(const std::vector<NamedTensor>&) override { return Status::Ok(); }
  Expected<std::vector<RunOutput>> RunOther(
      const std::string&, const std::string&,
      const std::vector<std::pair<std::string, const Tensor*>>&,
      const std::vector<std::string>&) override {
    return Unsupported("side " + reader_->path() + " is a dump: it cannot run an isolated node");
  }

  Expected<std::vector<NamedTensor>> RecordedInputs() const override {
    std::vector<NamedTensor> out;
    for (const auto& e : reader_->entries()) {
      if (e.kind != DumpEntryKind::kInput) continue;
      OP_ASSIGN_OR_RETURN(Tensor t, reader_->Load(e));
      out.push_back({e.name, std::move(t)});
    }
    return out;
  }

  Expected<std::vector<RunOutput>> Fetch(const std::vector<std::string>& names) override {
    std::vector<RunOutput> out;
    for (const auto& n : names) {
      const DumpEntry* e = reader_->Find(n);
      if (e == nullptr) return NotFound(reader_->path() + ": no tensor '" + n + "'");
      OP_ASSIGN_OR_RETURN(Tensor t, reader_->Load(*e));
      out.push_back({n, std::move(t), {}});
    }
    return out;
  }

 private:
  std::unique_ptr<DumpReader> reader_;
  SideInfo info_;
  std::vector<SideTensor> tensors_;
};

}  // namespace

Expected<std::unique_ptr<Side>> OpenLiveSide(const Model& model, const SideSpec& spec) {
  OP_ASSIGN_OR_RETURN(auto backend, LoadBackend(spec.ort_library));
  // a plugin library's provider by the name the runtime knows it (reports, placement)
  OP_ASSIGN_OR_RETURN(SessionOptions session, backend->ResolveProvider(spec.session));
  return std::unique_ptr<Side>(
      std::make_unique<LiveSide>(model, std::move(backend), session, spec.keep_session,
                                 spec.hold_session, spec.mark_fused_tensors, spec.max_memory));
}

Expected<std::unique_ptr<Side>> OpenSide(const SideSpec& spec) {
  if (IsDumpPath(spec.path)) {
    OP_ASSIGN_OR_RETURN(auto reader, DumpReader::Open(spec.path));
    return std::unique_ptr<Side>(std::make_unique<DumpSide>(std::move(reader)));
  }
  OP_ASSIGN_OR_RETURN(Model model, Model::Load(spec.path));
  return OpenLiveSide(model, spec);
}

}  // namespace onnxprobe
