// The environment snapshot of a baseline: versions, runtime library bytes, session options,
// CPU and OS, model identity; and what changed between two snapshots.
#include <sys/utsname.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <thread>

#include "onnxprobe/baseline/baseline.h"
#include "onnxprobe/common/hash.h"
#include "onnxprobe/common/version.h"

namespace onnxprobe {
namespace {

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\"");
  size_t e = s.find_last_not_of(" \t\"");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

// The first "key : value" line of /proc/cpuinfo with this key.
std::string CpuInfo(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    auto colon = line.find(':');
    if (colon != std::string::npos && Trim(line.substr(0, colon)) == key)
      return Trim(line.substr(colon + 1));
  }
  return "";
}

std::string OsDescription() {
  std::string os;
  struct utsname u {};
  if (uname(&u) == 0) os = std::string(u.sysname) + " " + u.release + " " + u.machine;
  std::ifstream in("/etc/os-release");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("PRETTY_NAME=", 0) == 0) {
      os += (os.empty() ? "" : ", ") + Trim(line.substr(12));
      break;
    }
  }
  return os;
}

std::string JoinOptions(const std::map<std::string, std::string>& m) {
  std::string s;
  for (const auto& [k, v] : m) s += (s.empty() ? "" : ",") + k + "=" + v;
  return s;
}

}  // namespace

const char* EnvFieldName(EnvField f) {
  switch (f) {
    case EnvField::kOnnxprobeVersion:
      return "onnxprobe_version";
    case EnvField::kRuntimeVersion:
      return "runtime_version";
    case EnvField::kRuntimeLibrary:
      return "runtime_library_sha256";
    case EnvField::kProvider:
      return "provider";
    case EnvField::kProviderOptions:
      return "provider_options";
    case EnvField::kOptimizationLevel:
      return "optimization_level";
    case EnvField::kExecutionMode:
      return "execution_mode";
    case EnvField::kIntraOpThreads:
      return "intra_op_threads";
    case EnvField::kInterOpThreads:
      return "inter_op_threads";
    case EnvField::kCpuModel:
      return "cpu_model";
    case EnvField::kCpuFlags:
      return "cpu_flags";
    case EnvField::kCpuCount:
      return "cpu_count";
    case EnvField::kOs:
      return "os";
    case EnvField::kModel:
      return "model_sha256";
  }
  return "?";
}

Environment SnapshotEnvironment(const Backend& backend, const SessionOptions& session,
                                const std::string& model_sha256) {
  Environment e;
  e.onnxprobe_version = Version();
  e.runtime_version = backend.version();
  e.runtime_library = backend.library_path();
  e.runtime_library_sha256 = FileSha256(e.runtime_library);
  e.session = session;
  e.cpu_model = CpuInfo("model name");
  std::istringstream flags(CpuInfo("flags"));
  for (std::string f; flags >> f;) e.cpu_flags.push_back(f);
  std::sort(e.cpu_flags.begin(), e.cpu_flags.end());
  e.cpu_flags.erase(std::unique(e.cpu_flags.begin(), e.cpu_flags.end()), e.cpu_flags.end());
  e.cpu_count = static_cast<int>(std::thread::hardware_concurrency());
  e.os = OsDescription();
  e.model_sha256 = model_sha256;
  return e;
}

std::vector<EnvChange> DiffEnvironments(const Environment& a, const Environment& b) {
  std::vector<EnvChange> out;
  auto add = [&](EnvField f, const std::string& x, const std::string& y) {
    if (x != y) out.push_back({f, x, y});
  };
  auto num = [](int v) { return std::to_string(v); };
  add(EnvField::kOnnxprobeVersion, a.onnxprobe_version, b.onnxprobe_version);
  add(EnvField::kRuntimeVersion, a.runtime_version, b.runtime_version);
  add(EnvField::kRuntimeLibrary, a.runtime_library_sha256, b.runtime_library_sha256);
  // one provider spelled two ways ("cpu", "CPU") is no change
  if (!SameProvider(a.session.provider, b.session.provider))
    add(EnvField::kProvider, a.session.provider, b.session.provider);
  add(EnvField::kProviderOptions, JoinOptions(a.session.provider_options),
      JoinOptions(b.session.provider_options));
  add(EnvField::kOptimizationLevel, OptLevelName(a.session.optimization_level),
      OptLevelName(b.session.optimization_level));
  add(EnvField::kExecutionMode, a.session.sequential ? "sequential" : "parallel",
      b.session.sequential ? "sequential" : "parallel");
  add(EnvField::kIntraOpThreads, num(a.session.intra_op_threads), num(b.session.intra_op_threads));
  add(EnvField::kInterOpThreads, num(a.session.inter_op_threads), num(b.session.inter_op_threads));
  add(EnvField::kCpuModel, a.cpu_model, b.cpu_model);
  std::vector<std::string> only_a, only_b;
  std::set_difference(a.cpu_flags.begin(), a.cpu_flags.end(), b.cpu_flags.begin(),
                      b.cpu_flags.end(), std::back_inserter(only_a));
  std::set_difference(b.cpu_flags.begin(), b.cpu_flags.end(), a.cpu_flags.begin(),
                      a.cpu_flags.end(), std::back_inserter(only_b));
  if (!only_a.empty() || !only_b.empty()) {
    auto join = [](const std::vector<std::string>& v) {
      std::string s;
      for (const auto& x : v) s += (s.empty() ? "" : " ") + x;
      return s;
    };
    out.push_back({EnvField::kCpuFlags, join(only_a), join(only_b)});
  }
  add(EnvField::kCpuCount, num(a.cpu_count), num(b.cpu_count));
  add(EnvField::kOs, a.os, b.os);
  add(EnvField::kModel, a.model_sha256, b.model_sha256);
  return out;
}

}  // namespace onnxprobe
