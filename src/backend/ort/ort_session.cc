// One ONNX Runtime session: options, providers, plain runs and I/O-bound runs.
#include <algorithm>
#include <cctype>

#include "backend/ort/exact_kernels.h"
#include "backend/ort/ort_api.h"
#include "backend/ort/ort_values.h"
#include "backend/ort/provider_error.h"

namespace onnxprobe {

std::string FullProviderName(const std::string& name) {
  std::string lower;
  for (char c : name) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static const std::pair<const char*, const char*> kShort[] = {
      {"cpu", "CPUExecutionProvider"},           {"cuda", "CUDAExecutionProvider"},
      {"tensorrt", "TensorrtExecutionProvider"}, {"trt", "TensorrtExecutionProvider"},
      {"rocm", "ROCMExecutionProvider"},         {"migraphx", "MIGraphXExecutionProvider"},
      {"openvino", "OpenVINOExecutionProvider"}, {"dnnl", "DnnlExecutionProvider"},
      {"xnnpack", "XnnpackExecutionProvider"},   {"qnn", "QNNExecutionProvider"},
      {"coreml", "CoreMLExecutionProvider"},     {"dml", "DmlExecutionProvider"},
      {"azure", "AzureExecutionProvider"}};
  for (const auto& [s, full] : kShort) {
    std::string f = full;
    std::transform(f.begin(), f.end(), f.begin(), [](unsigned char c) { return std::tolower(c); });
    if (lower == s || lower == f) return full;
  }
  return name;
}

namespace {

class OrtSession : public BackendSession {
 public:
  explicit OrtSession(std::shared_ptr<OrtLib> lib) : lib_(std::move(lib)) {}
  ~OrtSession() override {
    const OrtApi* api = lib_->api;
    if (binding_) api->ReleaseIoBinding(binding_);
    if (session_) api->ReleaseSession(session_);
    if (mem_) api->ReleaseMemoryInfo(mem_);
  }

  Status Init(const std::string& bytes, const std::string& dir, const SessionOptions& o);
  const std::vector<std::string>& input_names() const override { return inputs_; }
  const std::vector<std::string>& output_names() const override { return outputs_; }
  Expected<std::vector<RunOutput>> Run(
      const std::vector<std::pair<std::string, const Tensor*>>& inputs,
      const std::vector<std::string>& outputs) override;
  Status RunInto(const std::vector<std::pair<std::string, const Tensor*>>& inputs,
                 const std::vector<std::string>& outputs, std::vector<RunOutput>* results) override;
  Expected<std::string> EndProfiling() override;

 private:
  Status AppendProvider(OrtSessionOptions* so, const SessionOptions& o);
  Expected<OrtValue*> WrapInput(const Tensor& t, const std::string& name);
  Expected<RunOutput> Adopt(OrtValue* v, const std::string& name);
  Status RunBound(const std::vector<std::pair<std::string, const Tensor*>>& inputs,
                  const std::vector<std::string>& outputs, std::vector<RunOutput>* results,
                  bool reuse);

  std::shared_ptr<OrtLib> lib_;
  ::OrtSession* session_ = nullptr;
  OrtIoBinding* binding_ = nullptr;
  OrtMemoryInfo* mem_ = nullptr;
  std::vector<std::string> inputs_, outputs_;
  bool profiling_ = false;
};

Status OrtSession::AppendProvider(OrtSessionOptions* so, const SessionOptions& o) {
  if (!o.provider_library.empty()) return AppendPluginProvider(*lib_, so, o);
  const OrtApi* api = lib_->api;
  std::string full = FullProviderName(o.provider);
  std::vector<const char*> keys, values;
  for (const auto& [k, v] : o.provider_options) {
    keys.push_back(k.c_str());
    values.push_back(v.c_str());
  }
  if (full == "CPUExecutionProvider") {
    if (o.low_memory && !o.provider_options.count("use_arena")) {
      OP_ORT(lib_, api->DisableCpuMemArena(so), "CPU provider");
    }
    for (const auto& [k, v] : o.provider_options) {
      if (k != "use_arena")
        return InvalidArgument("unknown CPU provider option '" + k + "' (known: use_arena)");
      OP_ORT(lib_, v == "0" ? api->DisableCpuMemArena(so) : api->EnableCpuMemArena(so),
             "CPU provider");
    }
    return Status::Ok();
  }
  char** names = nullptr;
  int n = 0;
  OP_ORT(lib_, api->GetAvailableProviders(&names, &n), "listing providers");
  std::vector<std::string> avail(names, names + n);
  IgnoreOrt(api, api->ReleaseAvailableProviders(names, n));
  if (std::find(avail.begin(), avail.end(), full) == avail.end()) {
    std::string list;
    for (const auto& a : avail) list += (list.empty() ? "" : ", ") + a;
    std::string installed;
    for (const auto& v : InstalledOrtVersionsWith(full))
      installed += (installed.empty() ? "; installed with it: --ort-version " : ", ") + v;
    return InvalidArgument("execution provider '" + o.provider + "' (" + full +
                           ") is not available in ONNX Runtime " + lib_->version + " at " +
                           lib_->path + " (available: " + list + ")" + installed);
  }
  std::string ctx = "execution provider " + full;
  if (full == "CUDAExecutionProvider") {
    OrtCUDAProviderOptionsV2* cuda = nullptr;
    OP_ORT(lib_, api->CreateCUDAProviderOptions(&cuda), ctx);
    Status st = FromOrt(
        api, api->UpdateCUDAProviderOptions(cuda, keys.data(), values.data(), keys.size()), ctx);
    if (st.ok())
      st = FromOrt(api, api->SessionOptionsAppendExecutionProvider_CUDA_V2(so, cuda), ctx);
    api->ReleaseCUDAProviderOptions(cuda);
    return st;
  }
  if (full == "TensorrtExecutionProvider") {
    OrtTensorRTProviderOptionsV2* trt = nullptr;
    OP_ORT(lib_, api->CreateTensorRTProviderOptions(&trt), ctx);
    Status st = FromOrt(
        api, api->UpdateTensorRTProviderOptions(trt, keys.data(), values.data(), keys.size()), ctx);
    if (st.ok())
      st = FromOrt(api, api->SessionOptionsAppendExecutionProvider_TensorRT_V2(so, trt), ctx);
    api->ReleaseTensorRTProviderOptions(trt);
    return st;
  }
  std::string short_name = full.substr(0, full.find("ExecutionProvider"));
  OP_ORT(lib_,
         api->SessionOptionsAppendExecutionProvider(so, short_name.c_str(), keys.data(),
                                                    values.data(), keys.size()),
         ctx);
  return Status::Ok();
}

Status OrtSession::Init(const std::string& bytes, const std::string& dir,
                        const SessionOptions& given) {
  // a plugin library's provider by its registered name, for every decision below
  OP_ASSIGN_OR_RETURN(const SessionOptions o, ResolvePluginProvider(*lib_, given));
  const OrtApi* api = lib_->api;
  OrtSessionOptions* so = nullptr;
  OP_ORT(lib_, api->CreateSessionOptions(&so), "session options");
  std::unique_ptr<OrtSessionOptions, void (*)(OrtSessionOptions*)> guard(
      so, lib_->api->ReleaseSessionOptions);
  GraphOptimizationLevel level = ORT_DISABLE_ALL;
  switch (o.optimization_level) {
    case OptLevel::kDisabled:
      level = ORT_DISABLE_ALL;
      break;
    case OptLevel::kBasic:
      level = ORT_ENABLE_BASIC;
      break;
    case OptLevel::kExtended:
      level = ORT_ENABLE_EXTENDED;
      break;
    case OptLevel::kAll:
      level = ORT_ENABLE_ALL;
      break;
  }
  OP_ORT(lib_, api->SetSessionGraphOptimizationLevel(so, level), "session options");
  if (o.quiet)
    OP_ORT(lib_, api->SetSessionLogSeverityLevel(so, ORT_LOGGING_LEVEL_ERROR), "session options");
  OP_ORT(lib_, api->SetSessionExecutionMode(so, o.sequential ? ORT_SEQUENTIAL : ORT_PARALLEL),
         "session options");
  if (o.intra_op_threads > 0)
    OP_ORT(lib_, api->SetIntraOpNumThreads(so, o.intra_op_threads), "session options");
  if (o.inter_op_threads > 0)
    OP_ORT(lib_, api->SetInterOpNumThreads(so, o.inter_op_threads), "session options");
  OP_ORT(lib_,
         api->AddSessionConfigEntry(so, "session.model_external_initializers_file_folder_path",
                                    dir.c_str()),
         "session options");
  if (!IsCpuProvider(o.provider) && !o.allow_fallback) {
    OP_ORT(lib_, api->AddSessionConfigEntry(so, "session.disable_cpu_ep_fallback", "1"),
           "session options");
  }
  if (!o.save_optimized_model.empty()) {
    OP_ORT(lib_, api->SetOptimizedModelFilePath(so, o.save_optimized_model.c_str()),
           "session options");
    OP_ORT(lib_,
           api->AddSessionConfigEntry(so, "session.optimized_model_external_initializers_file_name",
                                      kOptimizedModelWeightsFile),
           "session options");
  }
  if (!o.profile_prefix.empty()) {
    OP_ORT(lib_, api->EnableProfiling(so, o.profile_prefix.c_str()), "session options");
    profiling_ = true;
  }
  for (const auto& [k, v] : o.config_entries) {
    OP_ORT(lib_, api->AddSessionConfigEntry(so, k.c_str(), v.c_str()),
           "session config entry '" + k + "'");
  }
  OP_RETURN_IF_ERROR(AppendProvider(so, o));
  for (const auto& lib : o.custom_op_libraries) {
    OP_ORT(lib_, api->RegisterCustomOpsLibrary_V2(so, lib.c_str()),
           "custom operator library '" + lib + "'");
  }
  if (o.exact_kernels) OP_RETURN_IF_ERROR(AddExactKernels(api, so));
  OP_ASSIGN_OR_RETURN(std::string located, LocateExternalData(bytes, dir, lib_->version, o));
  const std::string& model = located.empty() ? bytes : located;
  Status created = FromOrt(
      api, api->CreateSessionFromArray(lib_->env, model.data(), model.size(), so, &session_),
      "ONNX Runtime " + lib_->version + " rejected the model");
  std::string full = FullProviderName(o.provider);
  if (!created.ok() && full != "CPUExecutionProvider") {
    std::string why = ConciseProviderMessage(created.message());
    if (ProviderFailedOnItsOwnNodes(created.message())) {
      why += " (" + full + " took these nodes and failed on them: CPU fallback does not move them)";
    } else if (!o.allow_fallback) {
      // CPU fallback is off: a node the provider does not take fails the session, and ONNX
      // Runtime's message does not say so (OpenVINO's reads "the graph is not acyclic")
      why += " (with " + full +
             " every node must run on it, CPU fallback is disabled: a node it does not support "
             "also ends here; --allow-fallback runs such nodes on the CPU provider)";
    }
    return Status(created.code(), why);
  }
  OP_RETURN_IF_ERROR(created);
  OrtAllocator* alloc = nullptr;
  OP_ORT(lib_, api->GetAllocatorWithDefaultOptions(&alloc), "allocator");
  size_t n_in = 0, n_out = 0;
  OP_ORT(lib_, api->SessionGetInputCount(session_, &n_in), "session inputs");
  OP_ORT(lib_, api->SessionGetOutputCount(session_, &n_out), "session outputs");
  for (size_t i = 0; i < n_in + n_out; ++i) {
    char* name = nullptr;
    OP_ORT(lib_,
           i < n_in ? api->SessionGetInputName(session_, i, alloc, &name)
                    : api->SessionGetOutputName(session_, i - n_in, alloc, &name),
           "session names");
    (i < n_in ? inputs_ : outputs_).emplace_back(name);
    IgnoreOrt(api, api->AllocatorFree(alloc, name));
  }
  OP_ORT(lib_, api->CreateCpuMemoryInfo(OrtDeviceAllocator, OrtMemTypeDefault, &mem_),
         "memory info");
  return Status::Ok();
}

Expected<OrtValue*> OrtSession::WrapInput(const Tensor& t, const std::string& name) {
  OrtValue* v = nullptr;
  OP_ORT(lib_,
         lib_->api->CreateTensorWithDataAsOrtValue(
             mem_, const_cast<void*>(t.data()), t.byte_size(), t.shape().data(), t.shape().size(),
             static_cast<ONNXTensorElementDataType>(DTypeToOnnx(t.dtype())), &v),
         "tensor '" + name + "'");
  return v;
}

Expected<RunOutput> OrtSession::Adopt(OrtValue* v, const std::string& name) {
  const OrtApi* api = lib_->api;
  RunOutput out;
  out.name = name;
  ONNXType type;
  OP_ORT(lib_, api->GetValueType(v, &type), "output '" + name + "'");
  if (type != ONNX_TYPE_TENSOR) {
    // a sequence or map (a ZipMap's class scores) compares as its values (ort_values.h)
    auto flat = FlattenValue(api, v, "output '" + name + "'");
    api->ReleaseValue(v);
    if (flat.ok()) {
      out.tensor = std::move(*flat);
    } else {
      out.skipped = {SkipKind::kNotATensor,
                     "not a tensor, and its values do not flatten: " + flat.status().message()};
    }
    return out;
  }
  OrtTensorTypeAndShapeInfo* info = nullptr;
  OP_ORT(lib_, api->GetTensorTypeAndShape(v, &info), "output '" + name + "'");
  ONNXTensorElementDataType et;
  size_t rank = 0;
  Status st = FromOrt(api, api->GetTensorElementType(info, &et), "output '" + name + "'");
  if (st.ok()) st = FromOrt(api, api->GetDimensionsCount(info, &rank), "output '" + name + "'");
  Shape shape(rank);
  if (st.ok())
    st = FromOrt(api, api->GetDimensions(info, shape.data(), rank), "output '" + name + "'");
  api->ReleaseTensorTypeAndShapeInfo(info);
  if (!st.ok()) {
    api->ReleaseValue(v);
    return st;
  }
  auto dt = DTypeFromOnnx(static_cast<int>(et));
  if (!dt.ok()) {
    api->ReleaseValue(v);
    out.skipped = {SkipKind::kUnsupportedType, dt.status().message()};
    return out;
  }
  void* data = nullptr;
  OP_ORT(lib_, api->GetTensorMutableData(v, &data), "output '" + name + "'");
  auto n = NumElements(shape);
  if (!n.ok() || *n == 0 || data == nullptr) {
    api->ReleaseValue(v);
    OP_ASSIGN_OR_RETURN(out.tensor, Tensor::Allocate(*dt, shape));
    return out;
  }
  auto lib = lib_;
  std::shared_ptr<uint8_t> owner(static_cast<uint8_t*>(data),
                                 [lib, v](uint8_t*) { lib->api->ReleaseValue(v); });
  out.tensor = Tensor::Wrap(*dt, std::move(shape), std::move(owner));
  return out;
}

Expected<std::vector<RunOutput>> OrtSession::Run(
    const std::vector<std::pair<std::string, const Tensor*>>& inputs,
    const std::vector<std::string>& outputs) {
  const OrtApi* api = lib_->api;
  std::vector<const char*> in_names, out_names;
  std::vector<OrtValue*> in_vals, out_vals(outputs.size(), nullptr);
  auto release_inputs = [&] {
    for (OrtValue* v : in_vals) api->ReleaseValue(v);
  };
  for (const auto& [name, t] : inputs) {
    auto v = WrapInput(*t, name);
    if (!v.ok()) {
      release_inputs();
      return v.status();
    }
    in_names.push_back(name.c_str());
    in_vals.push_back(*v);
  }
  for (const auto& o : outputs) out_names.push_back(o.c_str());
  Status st = FromOrt(api,
                      api->Run(session_, nullptr, in_names.data(), in_vals.data(), in_vals.size(),
                               out_names.data(), out_names.size(), out_vals.data()),
                      "ONNX Runtime " + lib_->version + " run failed");
  release_inputs();
  if (!st.ok()) return st;
  std::vector<RunOutput> results;
  for (size_t i = 0; i < outputs.size(); ++i) {
    auto r = Adopt(out_vals[i], outputs[i]);
    if (!r.ok()) {
      for (size_t j = i + 1; j < outputs.size(); ++j) api->ReleaseValue(out_vals[j]);
      return r.status();
    }
    results.push_back(std::move(*r));
  }
  return results;
}

Status OrtSession::RunBound(const std::vector<std::pair<std::string, const Tensor*>>& inputs,
                            const std::vector<std::string>& outputs,
                            std::vector<RunOutput>* results, bool reuse) {
  const OrtApi* api = lib_->api;
  if (binding_ == nullptr) OP_ORT(lib_, api->CreateIoBinding(session_, &binding_), "I/O binding");
  api->ClearBoundInputs(binding_);  // void in the C API
  api->ClearBoundOutputs(binding_);
  std::vector<OrtValue*> wrappers;
  auto release = [&] {
    for (OrtValue* v : wrappers) api->ReleaseValue(v);
    wrappers.clear();
  };
  Status st;
  for (const auto& [name, t] : inputs) {
    auto v = WrapInput(*t, name);
    if (!v.ok()) {
      release();
      return v.status();
    }
    wrappers.push_back(*v);
    st = FromOrt(api, api->BindInput(binding_, name.c_str(), *v), "binding input '" + name + "'");
    if (!st.ok()) break;
  }
  std::vector<bool> preallocated(outputs.size(), false);
  for (size_t i = 0; st.ok() && i < outputs.size(); ++i) {
    const char* name = outputs[i].c_str();
    if (reuse && (*results)[i].name == outputs[i] && !(*results)[i].tensor.empty() &&
        (*results)[i].tensor.num_elements() > 0) {
      auto v = WrapInput((*results)[i].tensor, outputs[i]);
      if (!v.ok()) {
        st = v.status();
        break;
      }
      wrappers.push_back(*v);
      preallocated[i] = true;
      st = FromOrt(api, api->BindOutput(binding_, name, *v), "binding output '" + outputs[i] + "'");
    } else {
      st = FromOrt(api, api->BindOutputToDevice(binding_, name, mem_),
                   "binding output '" + outputs[i] + "'");
    }
  }
  if (st.ok()) {
    st = FromOrt(api, api->RunWithBinding(session_, nullptr, binding_),
                 "ONNX Runtime " + lib_->version + " run failed");
  }
  if (!st.ok()) {
    release();
    return st;
  }
  OrtAllocator* alloc = nullptr;
  OP_ORT(lib_, api->GetAllocatorWithDefaultOptions(&alloc), "allocator");
  OrtValue** vals = nullptr;
  size_t count = 0;
  st = FromOrt(api, api->GetBoundOutputValues(binding_, alloc, &vals, &count), "bound outputs");
  if (st.ok() && count != outputs.size())
    st = BackendError("I/O binding returned a wrong output count");
  std::vector<RunOutput> fresh(outputs.size());
  for (size_t i = 0; i < count; ++i) {
    if (!st.ok() || preallocated[i]) {
      api->ReleaseValue(vals[i]);  // our buffer already holds the data
      continue;
    }
    auto r = Adopt(vals[i], outputs[i]);
    if (!r.ok()) {
      st = r.status();
      continue;
    }
    fresh[i] = std::move(*r);
  }
  if (vals != nullptr) IgnoreOrt(api, api->AllocatorFree(alloc, vals));
  release();
  if (!st.ok()) return st;
  results->resize(outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!preallocated[i]) (*results)[i] = std::move(fresh[i]);
  }
  return Status::Ok();
}

Status OrtSession::RunInto(const std::vector<std::pair<std::string, const Tensor*>>& inputs,
                           const std::vector<std::string>& outputs,
                           std::vector<RunOutput>* results) {
  bool reuse = results->size() == outputs.size();
  Status st = RunBound(inputs, outputs, results, reuse);
  if (!st.ok() && reuse) {
    // shapes changed since the buffers were allocated: let the runtime allocate again
    results->clear();
    results->resize(outputs.size());
    st = RunBound(inputs, outputs, results, false);
  }
  return st;
}

Expected<std::string> OrtSession::EndProfiling() {
  if (!profiling_) return Unsupported("this session was not created with profiling");
  const OrtApi* api = lib_->api;
  OrtAllocator* alloc = nullptr;
  OP_ORT(lib_, api->GetAllocatorWithDefaultOptions(&alloc), "allocator");
  char* path = nullptr;
  OP_ORT(lib_, api->SessionEndProfiling(session_, alloc, &path), "ending the profiler");
  profiling_ = false;
  std::string out = path != nullptr ? path : "";
  if (path != nullptr) IgnoreOrt(api, api->AllocatorFree(alloc, path));
  return out;
}

}  // namespace

Expected<std::unique_ptr<BackendSession>> CreateOrtSession(std::shared_ptr<OrtLib> lib,
                                                           const std::string& model_bytes,
                                                           const std::string& model_dir,
                                                           const SessionOptions& options) {
  auto s = std::make_unique<OrtSession>(std::move(lib));
  OP_RETURN_IF_ERROR(s->Init(model_bytes, model_dir, options));
  return std::unique_ptr<BackendSession>(std::move(s));
}

}  // namespace onnxprobe
