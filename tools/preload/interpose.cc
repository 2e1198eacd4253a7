// libonnxprobe_preload.so: interposes OrtGetApiBase. Unconfigured (ONNXPROBE_CAPTURE unset) or
// misconfigured, it hands out the runtime's own OrtApiBase untouched. Configured, GetApi returns
// a copy of the runtime's API table in which session creation, Run and the session-option
// setters are wrapped: each wrapper calls the real function first and leaves its arguments,
// results and errors as they are, then records what the probe needs.
#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "deployed_sessions.h"
#include "preload_config.h"
#include "recorded_options.h"

namespace onnxprobe::preload {
namespace {

using GetApiBaseFn = const OrtApiBase* (*)();

const OrtApi* g_real = nullptr;  // the runtime's table (every version shares one)
const OrtApiBase* g_real_base = nullptr;

// Bytes readable from `p` within the loaded object segment that holds it, at most `want`.
size_t ReadableBytesAt(const void* p, size_t want) {
  struct Query {
    uintptr_t addr;
    uintptr_t end = 0;
  } q{reinterpret_cast<uintptr_t>(p)};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) -> int {
        auto* q = static_cast<Query*>(data);
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD) continue;
          uintptr_t lo = info->dlpi_addr + ph.p_vaddr, hi = lo + ph.p_memsz;
          if (q->addr >= lo && q->addr < hi) {
            q->end = hi;
            return 1;
          }
        }
        return 0;
      },
      &q);
  return q.end == 0 ? 0 : std::min<size_t>(want, q.end - q.addr);
}

// --- wrapped functions ------------------------------------------------------------------------
// The wrappers are noexcept like the table's entries: the probe's own work never throws into the
// application (a failure to record only loses a capture).
template <typename F>
void Guarded(F&& f) noexcept {
  try {
    f();
  } catch (...) {
  }
}

OrtStatus* ORT_API_CALL CreateSessionW(const OrtEnv* env, const ORTCHAR_T* path,
                                       const OrtSessionOptions* options,
                                       OrtSession** out) NO_EXCEPTION {
  OrtStatus* st = g_real->CreateSession(env, path, options, out);
  if (st == nullptr) Guarded([&] { OnSessionCreated(*out, path, nullptr, options); });
  return st;
}

OrtStatus* ORT_API_CALL CreateSessionFromArrayW(const OrtEnv* env, const void* data, size_t size,
                                                const OrtSessionOptions* options,
                                                OrtSession** out) NO_EXCEPTION {
  OrtStatus* st = g_real->CreateSessionFromArray(env, data, size, options, out);
  if (st == nullptr) {
    Guarded([&] {
      auto bytes = std::make_shared<const std::string>(static_cast<const char*>(data), size);
      OnSessionCreated(*out, nullptr, std::move(bytes), options);
    });
  }
  return st;
}

OrtStatus* ORT_API_CALL RunW(OrtSession* session, const OrtRunOptions* run_options,
                             const char* const* input_names, const OrtValue* const* inputs,
                             size_t input_len, const char* const* output_names, size_t output_len,
                             OrtValue** outputs) NO_EXCEPTION {
  OrtStatus* st = g_real->Run(session, run_options, input_names, inputs, input_len, output_names,
                              output_len, outputs);
  if (st == nullptr) Guarded([&] { OnRun(session, input_names, inputs, input_len); });
  return st;
}

void ORT_API_CALL ReleaseSessionW(OrtSession* session) NO_EXCEPTION {
  Guarded([&] { OnSessionReleased(session); });
  g_real->ReleaseSession(session);
}

OrtStatus* ORT_API_CALL CreateSessionOptionsW(OrtSessionOptions** out) NO_EXCEPTION {
  OrtStatus* st = g_real->CreateSessionOptions(out);
  if (st == nullptr) Guarded([&] { OnOptionsCreated(*out); });
  return st;
}

OrtStatus* ORT_API_CALL CloneSessionOptionsW(const OrtSessionOptions* in,
                                             OrtSessionOptions** out) NO_EXCEPTION {
  OrtStatus* st = g_real->CloneSessionOptions(in, out);
  if (st == nullptr) Guarded([&] { OnOptionsCloned(in, *out); });
  return st;
}

void ORT_API_CALL ReleaseSessionOptionsW(OrtSessionOptions* options) NO_EXCEPTION {
  Guarded([&] { OnOptionsReleased(options); });
  g_real->ReleaseSessionOptions(options);
}

OrtStatus* ORT_API_CALL SetOptLevelW(OrtSessionOptions* o,
                                     GraphOptimizationLevel level) NO_EXCEPTION {
  OrtStatus* st = g_real->SetSessionGraphOptimizationLevel(o, level);
  if (st == nullptr) {
    Record(o, [level](RecordedOptions& r) {
      r.optimization_level = level == ORT_DISABLE_ALL       ? OptLevel::kDisabled
                             : level == ORT_ENABLE_BASIC    ? OptLevel::kBasic
                             : level == ORT_ENABLE_EXTENDED ? OptLevel::kExtended
                                                            : OptLevel::kAll;
    });
  }
  return st;
}

OrtStatus* ORT_API_CALL SetExecutionModeW(OrtSessionOptions* o, ExecutionMode mode) NO_EXCEPTION {
  OrtStatus* st = g_real->SetSessionExecutionMode(o, mode);
  if (st == nullptr)
    Record(o, [mode](RecordedOptions& r) { r.sequential = mode == ORT_SEQUENTIAL; });
  return st;
}

OrtStatus* ORT_API_CALL SetIntraW(OrtSessionOptions* o, int n) NO_EXCEPTION {
  OrtStatus* st = g_real->SetIntraOpNumThreads(o, n);
  if (st == nullptr) Record(o, [n](RecordedOptions& r) { r.intra_op_threads = n; });
  return st;
}

OrtStatus* ORT_API_CALL SetInterW(OrtSessionOptions* o, int n) NO_EXCEPTION {
  OrtStatus* st = g_real->SetInterOpNumThreads(o, n);
  if (st == nullptr) Record(o, [n](RecordedOptions& r) { r.inter_op_threads = n; });
  return st;
}

OrtStatus* ORT_API_CALL AddConfigEntryW(OrtSessionOptions* o, const char* key,
                                        const char* value) NO_EXCEPTION {
  OrtStatus* st = g_real->AddSessionConfigEntry(o, key, value);
  if (st == nullptr) {
    std::string k = key, v = value;
    Record(o, [k, v](RecordedOptions& r) { r.config_entries[k] = v; });
  }
  return st;
}

OrtStatus* ORT_API_CALL AppendProviderW(OrtSessionOptions* o, const char* name,
                                        const char* const* keys, const char* const* values,
                                        size_t n) NO_EXCEPTION {
  OrtStatus* st = g_real->SessionOptionsAppendExecutionProvider(o, name, keys, values, n);
  if (st == nullptr) {
    std::string provider = name;
    std::map<std::string, std::string> kv;
    for (size_t i = 0; i < n; ++i) kv[keys[i]] = values[i];
    Record(o, [provider, kv](RecordedOptions& r) {
      if (r.providers.empty()) r.provider_options = kv;
      r.providers.push_back(provider);
    });
  }
  return st;
}

OrtStatus* ORT_API_CALL AppendCudaW(OrtSessionOptions* o,
                                    const OrtCUDAProviderOptions* cuda) NO_EXCEPTION {
  OrtStatus* st = g_real->SessionOptionsAppendExecutionProvider_CUDA(o, cuda);
  if (st == nullptr) {
    int device = cuda != nullptr ? cuda->device_id : 0;
    Record(o, [device](RecordedOptions& r) {
      if (r.providers.empty()) r.provider_options = {{"device_id", std::to_string(device)}};
      r.providers.push_back("CUDA");
    });
  }
  return st;
}

OrtStatus* ORT_API_CALL AppendCudaV2W(OrtSessionOptions* o,
                                      const OrtCUDAProviderOptionsV2* cuda) NO_EXCEPTION {
  OrtStatus* st = g_real->SessionOptionsAppendExecutionProvider_CUDA_V2(o, cuda);
  if (st == nullptr) {
    Record(o, [](RecordedOptions& r) {
      r.providers.push_back("CUDA");
      r.unmirrored.push_back("CUDA provider options given as OrtCUDAProviderOptionsV2");
    });
  }
  return st;
}

OrtStatus* ORT_API_CALL RegisterCustomOpsV2W(OrtSessionOptions* o,
                                             const ORTCHAR_T* library) NO_EXCEPTION {
  OrtStatus* st = g_real->RegisterCustomOpsLibrary_V2(o, library);
  if (st == nullptr) {
    std::string lib = library;
    Record(o, [lib](RecordedOptions& r) { r.custom_op_libraries.push_back(lib); });
  }
  return st;
}

// Settings the shadow session cannot repeat: the manifest says they were made.
#define OP_UNMIRRORED(NAME, PARAMS, ARGS, WHAT)                                             \
  OrtStatus* ORT_API_CALL NAME##W PARAMS NO_EXCEPTION {                                     \
    OrtStatus* st = g_real->NAME ARGS;                                                      \
    if (st == nullptr) Record(o, [](RecordedOptions& r) { r.unmirrored.push_back(WHAT); }); \
    return st;                                                                              \
  }
OP_UNMIRRORED(AddInitializer, (OrtSessionOptions * o, const char* n, const OrtValue* v), (o, n, v),
              "initializers supplied by the application (AddInitializer)")
OP_UNMIRRORED(AddFreeDimensionOverride, (OrtSessionOptions * o, const char* d, int64_t v),
              (o, d, v), "free dimension overrides (AddFreeDimensionOverride)")
OP_UNMIRRORED(AddFreeDimensionOverrideByName, (OrtSessionOptions * o, const char* d, int64_t v),
              (o, d, v), "free dimension overrides (AddFreeDimensionOverrideByName)")
OP_UNMIRRORED(SessionOptionsAppendExecutionProvider_TensorRT,
              (OrtSessionOptions * o, const OrtTensorRTProviderOptions* p), (o, p),
              "TensorRT provider (not repeated by the shadow session)")
OP_UNMIRRORED(SessionOptionsAppendExecutionProvider_TensorRT_V2,
              (OrtSessionOptions * o, const OrtTensorRTProviderOptionsV2* p), (o, p),
              "TensorRT provider (not repeated by the shadow session)")
OP_UNMIRRORED(SessionOptionsAppendExecutionProvider_ROCM,
              (OrtSessionOptions * o, const OrtROCMProviderOptions* p), (o, p),
              "ROCm provider (not repeated by the shadow session)")
OP_UNMIRRORED(SessionOptionsAppendExecutionProvider_OpenVINO,
              (OrtSessionOptions * o, const OrtOpenVINOProviderOptions* p), (o, p),
              "OpenVINO provider (not repeated by the shadow session)")
#undef OP_UNMIRRORED

// --- the table handed out -----------------------------------------------------------------

// Room for API tables newer than the headers this was built with: entries the headers do not
// know are copied as they are (never wrapped), so an application built against a newer runtime
// still finds them.
constexpr size_t kTableBytes = 16384;

const OrtApi* WrappedTable(uint32_t version, const OrtApi* real) {
  static std::mutex mu;
  static auto* tables = new std::map<uint32_t, const OrtApi*>();
  std::lock_guard<std::mutex> lock(mu);
  auto it = tables->find(version);
  if (it != tables->end()) return it->second;
  size_t bytes = ReadableBytesAt(real, std::max(kTableBytes, sizeof(OrtApi)));
  if (bytes < sizeof(OrtApi)) return real;  // cannot copy safely: capture nothing
  auto* copy = static_cast<OrtApi*>(operator new(std::max(kTableBytes, sizeof(OrtApi))));
  std::memset(static_cast<void*>(copy), 0, std::max(kTableBytes, sizeof(OrtApi)));
  std::memcpy(static_cast<void*>(copy), real, bytes);
  copy->CreateSession = CreateSessionW;
  copy->CreateSessionFromArray = CreateSessionFromArrayW;
  copy->Run = RunW;
  copy->ReleaseSession = ReleaseSessionW;
  copy->CreateSessionOptions = CreateSessionOptionsW;
  copy->CloneSessionOptions = CloneSessionOptionsW;
  copy->ReleaseSessionOptions = ReleaseSessionOptionsW;
  copy->SetSessionGraphOptimizationLevel = SetOptLevelW;
  copy->SetSessionExecutionMode = SetExecutionModeW;
  copy->SetIntraOpNumThreads = SetIntraW;
  copy->SetInterOpNumThreads = SetInterW;
  copy->AddSessionConfigEntry = AddConfigEntryW;
  copy->SessionOptionsAppendExecutionProvider = AppendProviderW;
  copy->SessionOptionsAppendExecutionProvider_CUDA = AppendCudaW;
  copy->SessionOptionsAppendExecutionProvider_CUDA_V2 = AppendCudaV2W;
  copy->RegisterCustomOpsLibrary_V2 = RegisterCustomOpsV2W;
  copy->AddInitializer = AddInitializerW;
  copy->AddFreeDimensionOverride = AddFreeDimensionOverrideW;
  copy->AddFreeDimensionOverrideByName = AddFreeDimensionOverrideByNameW;
  copy->SessionOptionsAppendExecutionProvider_TensorRT =
      SessionOptionsAppendExecutionProvider_TensorRTW;
  copy->SessionOptionsAppendExecutionProvider_TensorRT_V2 =
      SessionOptionsAppendExecutionProvider_TensorRT_V2W;
  copy->SessionOptionsAppendExecutionProvider_ROCM = SessionOptionsAppendExecutionProvider_ROCMW;
  copy->SessionOptionsAppendExecutionProvider_OpenVINO =
      SessionOptionsAppendExecutionProvider_OpenVINOW;
  tables->emplace(version, copy);
  return copy;
}

const OrtApi* ORT_API_CALL GetApiW(uint32_t version) NO_EXCEPTION {
  const OrtApi* real = g_real_base->GetApi(version);
  if (real == nullptr) return nullptr;
  return WrappedTable(version, real);
}

const char* ORT_API_CALL GetVersionStringW() NO_EXCEPTION {
  return g_real_base->GetVersionString();
}

const OrtApiBase kWrappedBase = {GetApiW, GetVersionStringW};

// Reads the configuration once; false leaves the runtime untouched.
bool Configure(const OrtApiBase* real_base, GetApiBaseFn real_fn) {
  PreloadConfig config;
  ConfigError error;
  switch (ReadPreloadConfig(&config, &error)) {
    case ConfigState::kOff:
      return false;
    case ConfigState::kBad: {
      std::string msg =
          "onnxprobe preload: " + error.variable + ": " + error.message + "; capture is off\n";
      (void)!write(2, msg.data(), msg.size());
      return false;
    }
    case ConfigState::kOn:
      break;
  }
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(real_fn), &info) == 0 || info.dli_fname == nullptr) {
    std::string msg =
        "onnxprobe preload: ONNXPROBE_CAPTURE: cannot tell which ONNX Runtime library the "
        "application uses; capture is off\n";
    (void)!write(2, msg.data(), msg.size());
    return false;
  }
  g_real_base = real_base;
  // the newest table both know; every function the probe wraps or calls exists since API 14
  // (asking an older library for a newer table makes it print a complaint)
  uint32_t newest = ORT_API_VERSION;
  unsigned major = 0, minor = 0;
  if (std::sscanf(real_base->GetVersionString(), "%u.%u", &major, &minor) == 2 && major == 1 &&
      minor < newest)
    newest = minor;
  for (uint32_t v = newest; v >= 14 && g_real == nullptr; --v) g_real = real_base->GetApi(v);
  if (g_real == nullptr) {
    std::string msg =
        "onnxprobe preload: ONNXPROBE_CAPTURE: ONNX Runtime " +
        std::string(real_base->GetVersionString()) +
        " is too old (API 14, ONNX Runtime 1.14, or newer is needed); capture is off\n";
    (void)!write(2, msg.data(), msg.size());
    return false;
  }
  StartCapturing(config, g_real, info.dli_fname);
  return true;
}

}  // namespace
}  // namespace onnxprobe::preload

extern "C" __attribute__((visibility("default"))) const OrtApiBase* ORT_API_CALL OrtGetApiBase(void)
    NO_EXCEPTION;

namespace onnxprobe::preload {
namespace {

// The runtime's own OrtGetApiBase: the next definition after this library (a runtime linked, or
// loaded with RTLD_GLOBAL), else one in any loaded object (a runtime loaded with RTLD_LOCAL, whose
// application found this function through RTLD_DEFAULT).
GetApiBaseFn FindRealGetApiBase() {
  if (auto fn = reinterpret_cast<GetApiBaseFn>(dlsym(RTLD_NEXT, "OrtGetApiBase"))) return fn;
  std::vector<std::string> names;  // collected first: no dlopen while the loader's list is held
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) -> int {
        if (info->dlpi_name != nullptr && info->dlpi_name[0] != 0)
          static_cast<std::vector<std::string>*>(data)->push_back(info->dlpi_name);
        return 0;
      },
      &names);
  for (const auto& name : names) {
    void* h = dlopen(name.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (h == nullptr) continue;
    auto fn = reinterpret_cast<GetApiBaseFn>(dlsym(h, "OrtGetApiBase"));
    dlclose(h);
    if (fn != nullptr && fn != &::OrtGetApiBase) return fn;
  }
  return nullptr;
}

}  // namespace
}  // namespace onnxprobe::preload

extern "C" __attribute__((visibility("default"))) const OrtApiBase* ORT_API_CALL OrtGetApiBase(void)
    NO_EXCEPTION {
  using namespace onnxprobe::preload;
  // The runtime the application loaded; looked up until found.
  static std::atomic<GetApiBaseFn> real_fn{nullptr};
  GetApiBaseFn fn = real_fn.load();
  if (fn == nullptr) {
    fn = FindRealGetApiBase();
    if (fn == nullptr) return nullptr;
    real_fn = fn;
  }
  const OrtApiBase* real = fn();
  static const bool active = Configure(real, fn);
  return active ? &kWrappedBase : real;
}
