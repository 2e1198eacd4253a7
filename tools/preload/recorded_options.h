// What the application set on its OrtSessionOptions through the API table the preload hands
// out. ONNX Runtime has no getters for most settings, so the wrapped setters record them here.
#pragma once

#include <onnxruntime_c_api.h>

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "onnxprobe/backend/backend.h"

namespace onnxprobe::preload {

struct RecordedOptions {
  OptLevel optimization_level = OptLevel::kAll;  // ONNX Runtime's default, ORT_ENABLE_ALL
  bool sequential = true;
  int intra_op_threads = 0, inter_op_threads = 0;
  std::vector<std::string> providers;                   // in the order appended
  std::map<std::string, std::string> provider_options;  // of the first provider
  std::map<std::string, std::string> config_entries;
  std::vector<std::string> custom_op_libraries;
  std::vector<std::string> unmirrored;  // settings made that the shadow session cannot repeat
};

// Registry keyed by the application's OrtSessionOptions pointer (thread-safe).
void OnOptionsCreated(const OrtSessionOptions* options);
void OnOptionsCloned(const OrtSessionOptions* from, const OrtSessionOptions* to);
void OnOptionsReleased(const OrtSessionOptions* options);
// Applies `change` to the record of `options` (creating it if the preload missed its creation).
void Record(const OrtSessionOptions* options,
            const std::function<void(RecordedOptions&)>& change) noexcept;
// The record of `options`; defaults when it was never seen (a null pointer included).
RecordedOptions Snapshot(const OrtSessionOptions* options);

// The shadow session's settings, and the manifest's "session" entries.
SessionOptions ToSessionOptions(const RecordedOptions& r);
std::vector<std::pair<std::string, std::string>> ToManifestSettings(const RecordedOptions& r);

}  // namespace onnxprobe::preload
