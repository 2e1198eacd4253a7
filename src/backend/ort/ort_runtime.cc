// Loading ONNX Runtime libraries with dlopen and choosing the API table each one supports.
#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>

#include "backend/ort/ort_api.h"

namespace fs = std::filesystem;

namespace onnxprobe {

Status FromOrt(const OrtApi* api, OrtStatus* st, const std::string& context) {
  if (st == nullptr) return Status::Ok();
  std::string msg = api->GetErrorMessage(st);
  api->ReleaseStatus(st);
  return BackendError(context + ": " + msg);
}

namespace {

void ORT_API_CALL CaptureLog(void* param, OrtLoggingLevel severity, const char* category,
                             const char* logid, const char* code_location, const char* message) {
  (void)logid;
  (void)code_location;
  auto* lib = static_cast<OrtLib*>(param);
  static const char* kLevel[] = {"verbose", "info", "warning", "error", "fatal"};
  std::lock_guard<std::mutex> lock(lib->log_mu);
  if (lib->log.size() < 1000) {
    lib->log.push_back(std::string(kLevel[severity]) + " [" + category + "] " + message);
  }
}

class OrtBackend : public Backend {
 public:
  explicit OrtBackend(std::shared_ptr<OrtLib> lib) : lib_(std::move(lib)) {}
  std::string name() const override { return "onnxruntime"; }
  std::string version() const override { return lib_->version; }
  std::string library_path() const override { return lib_->path; }
  std::vector<std::string> available_providers() const override {
    char** names = nullptr;
    int n = 0;
    std::vector<std::string> out;
    if (lib_->api->GetAvailableProviders(&names, &n) == nullptr) {
      for (int i = 0; i < n; ++i) out.emplace_back(names[i]);
      IgnoreOrt(lib_->api, lib_->api->ReleaseAvailableProviders(names, n));
    }
    return out;
  }
  Expected<std::unique_ptr<BackendSession>> CreateSession(const std::string& model_bytes,
                                                          const std::string& model_dir,
                                                          const SessionOptions& options) override {
    return CreateOrtSession(lib_, model_bytes, model_dir, options);
  }
  Expected<SessionOptions> ResolveProvider(const SessionOptions& options) override {
    return ResolvePluginProvider(*lib_, options);
  }
  std::vector<std::string> TakeLog() override {
    std::lock_guard<std::mutex> lock(lib_->log_mu);
    std::vector<std::string> out;
    out.swap(lib_->log);
    return out;
  }

 private:
  std::shared_ptr<OrtLib> lib_;
};

bool IsElfFile(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return true;  // unreadable: let dlopen say why
  char magic[4] = {};
  size_t n = std::fread(magic, 1, 4, f);
  std::fclose(f);
  return n == 4 && magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' && magic[3] == 'F';
}

Expected<std::shared_ptr<OrtLib>> OpenLibrary(const std::string& path) {
  std::error_code ec;
  if (path.find('/') != std::string::npos && !fs::exists(path, ec)) {
    return NotFound("ONNX Runtime library '" + path +
                    "' does not exist (run scripts/bootstrap.sh "
                    "or pass --ort-lib)");
  }
  if (path.find('/') != std::string::npos && !IsElfFile(path)) {
    // a file that is no shared library at all is a wrong path, not a runtime that failed
    return InvalidArgument("'" + path + "' is not an ONNX Runtime library (not a shared object)");
  }
  void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (h == nullptr)
    return BackendError("cannot load ONNX Runtime library '" + path + "': " + dlerror());
  using GetApiBaseFn = const OrtApiBase* (*)();
  auto get_base = reinterpret_cast<GetApiBaseFn>(dlsym(h, "OrtGetApiBase"));
  if (get_base == nullptr) {
    dlclose(h);
    return InvalidArgument("'" + path + "' is not an ONNX Runtime library (no OrtGetApiBase)");
  }
  auto lib = std::make_shared<OrtLib>();
  lib->path = path;
  lib->handle = h;
  const OrtApiBase* base = get_base();
  lib->version = base->GetVersionString();
  // The API table is append-only: take the newest version both sides know (ONNX Runtime 1.N
  // serves API N; asking an older library for a newer table makes it print a complaint).
  // Every function onnxprobe calls exists since API 14 (ONNX Runtime 1.14).
  uint32_t newest = ORT_API_VERSION;
  unsigned major = 0, minor = 0;
  if (std::sscanf(lib->version.c_str(), "%u.%u", &major, &minor) == 2 && major == 1 &&
      minor < newest)
    newest = minor;
  for (uint32_t v = newest; v >= 14 && lib->api == nullptr; --v) {
    lib->api = base->GetApi(v);
    lib->api_version = v;
  }
  if (lib->api == nullptr) {
    return BackendError("ONNX Runtime " + lib->version + " at '" + path +
                        "' is too old (API 14, ONNX Runtime 1.14, or newer is needed)");
  }
  OP_ORT(lib,
         lib->api->CreateEnvWithCustomLogger(CaptureLog, lib.get(), ORT_LOGGING_LEVEL_WARNING,
                                             "onnxprobe", &lib->env),
         "ONNX Runtime " + lib->version + ": cannot create environment");
  return lib;
}

}  // namespace

std::string DefaultOrtLibraryPath() {
  const char* env = std::getenv("ONNXPROBE_ORT_LIBRARY");
  if (env != nullptr && *env) return env;
  return ONNXPROBE_DEFAULT_ORT_LIBRARY;
}

std::string RuntimeDepsDir() {
  const char* env = std::getenv("ONNXPROBE_DEPS_DIR");
  return env != nullptr ? env : ONNXPROBE_DEPS_DIR;
}

Expected<std::string> OrtLibraryForVersion(const std::string& version) {
  // "1.23.2", or "1.24.1-openvino": the PyPI build of that version with the OpenVINO provider
  const std::string kOpenVino = "-openvino";
  bool openvino =
      version.size() > kOpenVino.size() &&
      version.compare(version.size() - kOpenVino.size(), kOpenVino.size(), kOpenVino) == 0;
  std::string number = openvino ? version.substr(0, version.size() - kOpenVino.size()) : version;
  for (char c : number) {
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.')) {
      return InvalidArgument("ONNX Runtime version '" + version +
                             "' is not of the form 1.23.2 (or 1.24.1-openvino)");
    }
  }
  std::string deps = RuntimeDepsDir();
  std::string path = deps + "/ort/" + version + "/lib/libonnxruntime.so." + number;
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    std::string how = openvino ? "ONNXPROBE_ORT_OPENVINO_VERSION=" + number
                               : "ONNXPROBE_ORT_EXTRA_VERSIONS=" + version;
    return NotFound("ONNX Runtime " + version + " is not installed (expected " + path +
                    "; install it with " + how + " scripts/bootstrap.sh)");
  }
  return path;
}

std::vector<std::string> InstalledOrtVersionsWith(const std::string& provider) {
  std::vector<std::string> versions;
  std::string deps = RuntimeDepsDir();
  std::error_code ec;
  if (deps.empty() || !fs::is_directory(deps + "/ort", ec)) return versions;
  for (const auto& entry : fs::directory_iterator(deps + "/ort", ec)) {
    std::string v = entry.path().filename().string();
    if (v.empty() || v[0] == '.') continue;  // a download in progress
    auto path = OrtLibraryForVersion(v);
    if (!path.ok()) continue;
    auto backend = LoadOrtBackend(*path);
    if (!backend.ok()) continue;
    std::string full = FullProviderName(provider);
    for (const auto& p : (*backend)->available_providers()) {
      if (p == full) versions.push_back(v);
    }
  }
  auto number = [](const std::string& v) {  // "1.24.1-openvino" -> {1, 24, 1}
    unsigned a = 0, b = 0, c = 0;
    std::sscanf(v.c_str(), "%u.%u.%u", &a, &b, &c);
    return std::vector<int>{int(a), int(b), int(c)};
  };
  std::sort(versions.begin(), versions.end(),
            [&](const std::string& x, const std::string& y) { return number(x) > number(y); });
  return versions;
}

Expected<std::shared_ptr<Backend>> LoadOrtBackend(const std::string& library_path) {
  static std::mutex mu;
  static std::map<std::string, std::shared_ptr<OrtLib>> loaded;
  std::string path = library_path.empty() ? DefaultOrtLibraryPath() : library_path;
  if (path.empty()) {  // a portable build (a wheel) knows no library of its own
    return NotFound(
        "no ONNX Runtime library: set ONNXPROBE_ORT_LIBRARY or --ort-lib, or install the "
        "onnxruntime package next to onnxprobe's (pip install onnxruntime)");
  }
  std::error_code ec;
  std::string key = fs::exists(path, ec) ? fs::canonical(path, ec).string() : path;
  std::lock_guard<std::mutex> lock(mu);
  auto it = loaded.find(key);
  if (it == loaded.end()) {
    OP_ASSIGN_OR_RETURN(auto lib, OpenLibrary(path));
    it = loaded.emplace(key, std::move(lib)).first;
  }
  return std::shared_ptr<Backend>(std::make_shared<OrtBackend>(it->second));
}

}  // namespace onnxprobe
