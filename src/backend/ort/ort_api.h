// Internal: the ONNX Runtime C API table of one loaded library, and status helpers.
#pragma once

#include <onnxruntime_c_api.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "onnxprobe/backend/backend.h"

namespace onnxprobe {

struct OrtLib {
  std::string path;
  void* handle = nullptr;
  const OrtApi* api = nullptr;
  uint32_t api_version = 0;
  std::string version;
  OrtEnv* env = nullptr;
  std::mutex log_mu;
  std::vector<std::string> log;
  // plugin provider libraries registered in `env`: canonical path -> the providers it brought
  std::mutex plugin_mu;
  std::map<std::string, std::vector<std::string>> plugins;
};

// Converts an OrtStatus into a Status (kBackend) and releases it. Null means success.
Status FromOrt(const OrtApi* api, OrtStatus* st, const std::string& context);

// For calls whose failure leaves nothing to do (frees, clears): release a status if one comes.
inline void IgnoreOrt(const OrtApi* api, OrtStatus* st) {
  if (st != nullptr) api->ReleaseStatus(st);
}

#define OP_ORT(lib, expr, context) \
  OP_RETURN_IF_ERROR(::onnxprobe::FromOrt((lib)->api, (expr), context))

// Whether a runtime of this version resolves external data of a model given as bytes against
// session.model_external_initializers_file_folder_path (1.23 and later; external_locations.cc).
bool HonorsExternalDataFolder(const std::string& version);
// The model bytes with relative external data locations made absolute against `dir` (for the
// runtimes that do not); empty when nothing is external. Fails when they do not parse.
Expected<std::string> AbsoluteExternalLocations(const std::string& bytes, const std::string& dir);
// What a runtime of `version` needs of a model's external data, as bytes to give it instead of
// `bytes`, or "" when `bytes` serve as they are: runtimes before 1.23 get absolute locations,
// and with optimizations on the data itself (they fold constants through an Initializer that
// refuses external data of a model given as bytes: "model_path must not be empty").
// external_locations.cc; a platform worker's copy returns "" (its host located them already).
Expected<std::string> LocateExternalData(const std::string& bytes, const std::string& dir,
                                         const std::string& version, const SessionOptions& o);

// Plugin execution providers (plugin_providers.cc). `options` with `provider` set to the
// registered name of the provider its provider_library brings (registering the library in the
// runtime's environment on first use); unchanged without a library.
Expected<SessionOptions> ResolvePluginProvider(OrtLib& lib, const SessionOptions& options);
// Appends the resolved plugin provider on its first device, with the provider options.
Status AppendPluginProvider(OrtLib& lib, OrtSessionOptions* so, const SessionOptions& options);

// Builds a session for one loaded library.
Expected<std::unique_ptr<BackendSession>> CreateOrtSession(std::shared_ptr<OrtLib> lib,
                                                           const std::string& model_bytes,
                                                           const std::string& model_dir,
                                                           const SessionOptions& options);

}  // namespace onnxprobe
