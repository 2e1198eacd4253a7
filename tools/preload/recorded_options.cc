#include "recorded_options.h"

#include <functional>
#include <mutex>
#include <unordered_map>

namespace onnxprobe::preload {
namespace {

std::mutex& Mu() {
  static auto* mu = new std::mutex();  // never destroyed: used until the process ends
  return *mu;
}
std::unordered_map<const OrtSessionOptions*, RecordedOptions>& Table() {
  static auto* table = new std::unordered_map<const OrtSessionOptions*, RecordedOptions>();
  return *table;
}

}  // namespace

void OnOptionsCreated(const OrtSessionOptions* options) {
  std::lock_guard<std::mutex> lock(Mu());
  Table()[options] = RecordedOptions();
}

void OnOptionsCloned(const OrtSessionOptions* from, const OrtSessionOptions* to) {
  std::lock_guard<std::mutex> lock(Mu());
  auto it = Table().find(from);
  Table()[to] = it == Table().end() ? RecordedOptions() : it->second;
}

void OnOptionsReleased(const OrtSessionOptions* options) {
  std::lock_guard<std::mutex> lock(Mu());
  Table().erase(options);
}

void Record(const OrtSessionOptions* options,
            const std::function<void(RecordedOptions&)>& change) noexcept {
  try {
    std::lock_guard<std::mutex> lock(Mu());
    change(Table()[options]);
  } catch (...) {  // a setting not recorded is only a less complete manifest
  }
}

RecordedOptions Snapshot(const OrtSessionOptions* options) {
  std::lock_guard<std::mutex> lock(Mu());
  auto it = Table().find(options);
  return it == Table().end() ? RecordedOptions() : it->second;
}

SessionOptions ToSessionOptions(const RecordedOptions& r) {
  SessionOptions o;
  o.optimization_level = r.optimization_level;
  o.sequential = r.sequential;
  o.intra_op_threads = r.intra_op_threads;
  o.inter_op_threads = r.inter_op_threads;
  if (!r.providers.empty()) {
    o.provider = r.providers.front();
    o.provider_options = r.provider_options;
  }
  o.config_entries = r.config_entries;
  o.custom_op_libraries = r.custom_op_libraries;
  return o;
}

std::vector<std::pair<std::string, std::string>> ToManifestSettings(const RecordedOptions& r) {
  std::vector<std::pair<std::string, std::string>> s;
  s.emplace_back("recorded_by", "onnxprobe preload (setters called through the ONNX Runtime API)");
  s.emplace_back("graph_optimization_level", OptLevelName(r.optimization_level));
  s.emplace_back("execution_mode", r.sequential ? "sequential" : "parallel");
  s.emplace_back("intra_op_threads", std::to_string(r.intra_op_threads));
  s.emplace_back("inter_op_threads", std::to_string(r.inter_op_threads));
  std::string providers;
  for (const auto& p : r.providers) providers += (providers.empty() ? "" : ",") + p;
  s.emplace_back("providers", providers.empty() ? "CPU (none appended)" : providers);
  for (const auto& [k, v] : r.provider_options) s.emplace_back("provider_option." + k, v);
  for (const auto& [k, v] : r.config_entries) s.emplace_back("config." + k, v);
  auto join = [](const std::vector<std::string>& v) {
    std::string out;
    for (const auto& x : v) out += (out.empty() ? "" : "; ") + x;
    return out;
  };
  if (!r.custom_op_libraries.empty())
    s.emplace_back("custom_op_libraries", join(r.custom_op_libraries));
  if (!r.unmirrored.empty()) s.emplace_back("not_mirrored", join(r.unmirrored));
  return s;
}

}  // namespace onnxprobe::preload
