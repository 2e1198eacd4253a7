// Plugin execution providers: a shared library registered with ONNX Runtime's environment
// (RegisterExecutionProviderLibrary, C API 22+), its providers found among the environment's
// devices (GetEpDevices) and appended to a session (SessionOptionsAppendExecutionProvider_V2).
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>

#include "backend/ort/ort_api.h"

namespace fs = std::filesystem;

namespace onnxprobe {
namespace {

// The oldest C API with plugin providers (ONNX Runtime 1.22).
constexpr uint32_t kPluginApi = 22;

std::string Lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

Expected<std::vector<const OrtEpDevice*>> EpDevices(OrtLib& lib) {
  const OrtEpDevice* const* devices = nullptr;
  size_t n = 0;
  OP_ORT(&lib, lib.api->GetEpDevices(lib.env, &devices, &n), "listing execution provider devices");
  return std::vector<const OrtEpDevice*>(devices, devices + n);
}

std::set<std::string> EpNames(OrtLib& lib, const std::vector<const OrtEpDevice*>& devices) {
  std::set<std::string> names;
  for (const OrtEpDevice* d : devices) names.insert(lib.api->EpDevice_EpName(d));
  return names;
}

// The providers `path` brings, registering it on first use (the caller holds plugin_mu).
Expected<std::vector<std::string>> Register(OrtLib& lib, const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    return NotFound("provider library '" + path + "': no such file");
  std::string key = fs::canonical(path, ec).string();
  auto it = lib.plugins.find(key);
  if (it != lib.plugins.end()) return it->second;
  if (lib.api_version < kPluginApi) {
    return InvalidArgument("provider library '" + path + "': ONNX Runtime " + lib.version +
                           " has no plugin execution providers (1.22 or newer has; choose one "
                           "with --ort-version or --ort-lib)");
  }
  OP_ASSIGN_OR_RETURN(auto before, EpDevices(lib));
  std::set<std::string> known = EpNames(lib, before);
  std::string registration = "onnxprobe:" + key;
  OP_ORT(&lib,
         lib.api->RegisterExecutionProviderLibrary(lib.env, registration.c_str(), key.c_str()),
         "provider library '" + path + "' (ONNX Runtime " + lib.version + ")");
  OP_ASSIGN_OR_RETURN(auto after, EpDevices(lib));
  std::vector<std::string> added;
  for (const auto& name : EpNames(lib, after))
    if (!known.count(name)) added.push_back(name);
  if (added.empty()) {
    IgnoreOrt(lib.api, lib.api->UnregisterExecutionProviderLibrary(lib.env, registration.c_str()));
    return InvalidArgument("provider library '" + path +
                           "' lists no device on this machine (ONNX Runtime " + lib.version +
                           " registered it; its factories support none of the devices found)");
  }
  lib.plugins.emplace(key, added);
  return added;
}

}  // namespace

Expected<SessionOptions> ResolvePluginProvider(OrtLib& lib, const SessionOptions& options) {
  if (options.provider_library.empty()) return options;
  std::lock_guard<std::mutex> lock(lib.plugin_mu);
  OP_ASSIGN_OR_RETURN(auto names, Register(lib, options.provider_library));
  SessionOptions out = options;
  if (options.provider.empty() || IsCpuProvider(options.provider)) {
    if (names.size() != 1) {
      return InvalidArgument("provider library '" + options.provider_library + "' provides " +
                             JoinNames(names) + ": name one with --provider");
    }
    out.provider = names[0];
    return out;
  }
  std::string want = Lower(options.provider);
  for (const auto& n : names) {
    std::string have = Lower(n);
    if (have == want || have == want + "executionprovider") {
      out.provider = n;
      return out;
    }
  }
  return InvalidArgument("provider library '" + options.provider_library + "' provides " +
                         JoinNames(names) + ", not '" + options.provider + "'");
}

Status AppendPluginProvider(OrtLib& lib, OrtSessionOptions* so, const SessionOptions& options) {
  OP_ASSIGN_OR_RETURN(SessionOptions resolved, ResolvePluginProvider(lib, options));
  OP_ASSIGN_OR_RETURN(auto devices, EpDevices(lib));
  const OrtEpDevice* device = nullptr;
  for (const OrtEpDevice* d : devices) {
    if (lib.api->EpDevice_EpName(d) == resolved.provider) {
      device = d;
      break;
    }
  }
  std::string ctx =
      "execution provider " + resolved.provider + " from '" + options.provider_library + "'";
  if (device == nullptr) return BackendError(ctx + ": no device lists it any more");
  std::vector<const char*> keys, values;
  for (const auto& [k, v] : resolved.provider_options) {
    keys.push_back(k.c_str());
    values.push_back(v.c_str());
  }
  OP_ORT(&lib,
         lib.api->SessionOptionsAppendExecutionProvider_V2(so, lib.env, &device, 1, keys.data(),
                                                           values.data(), keys.size()),
         ctx);
  return Status::Ok();
}

}  // namespace onnxprobe
