#include "onnxprobe/backend/platform.h"

#include <cctype>
#include <filesystem>

namespace onnxprobe {
namespace {

constexpr char kPlatforms[] =
    "aarch64, aarch64:<qemu cpu> (e.g. aarch64:cortex-a57, aarch64:neoverse-n1), x86-64-v2, "
    "x86-64-v3";

// This build's default ONNX Runtime version: the number the default library's file ends in.
std::string DefaultVersion() {
  std::string lib = DefaultOrtLibraryPath();
  size_t at = lib.rfind(".so.");
  return at == std::string::npos ? "" : lib.substr(at + 4);
}

}  // namespace

std::string Platform::Describe() const {
  if (!remote.empty()) return "remote " + arch + " (" + remote + ")";
  return name + " (" + qemu + " -cpu " + cpu + ")";
}

Platform RemotePlatform(const std::string& command) {
  Platform p;
  p.name = "remote";
  p.remote = command;
  return p;
}

Expected<Platform> ParsePlatform(const std::string& text) {
  Platform p;
  p.name = text;
  if (text == "aarch64" || text.rfind("aarch64:", 0) == 0) {
    p.arch = "aarch64";
    p.qemu = "qemu-aarch64";
    p.cpu = text == "aarch64" ? "max" : text.substr(8);
    bool ok = !p.cpu.empty();
    for (char c : p.cpu) ok &= std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
    if (ok) return p;
  } else if (text == "x86-64-v2" || text == "x86-64-v3") {
    // qemu's models for the levels; TCG emulates no AVX-512, so x86-64-v4 is this machine only
    p.arch = "x86_64";
    p.qemu = "qemu-x86_64";
    p.cpu = text == "x86-64-v2" ? "Nehalem" : "Haswell";
    return p;
  } else if (text == "x86-64-v4") {
    return InvalidArgument(
        "platform x86-64-v4: qemu emulates no AVX-512; run on a machine that has it (this one "
        "does when no platform is given and its CPU has AVX-512)");
  }
  return InvalidArgument("unknown platform '" + text + "' (" + kPlatforms + ")");
}

Expected<std::string> PlatformLibrary(const Platform& p, const std::string& version,
                                      const std::string& host_library) {
  if (p.arch == "x86_64") {
    if (!version.empty()) return OrtLibraryForVersion(version);
    return host_library.empty() ? DefaultOrtLibraryPath() : host_library;
  }
  std::string v = version.empty() ? DefaultVersion() : version;
  if (v.empty())
    return InvalidArgument(
        "this build has no default ONNX Runtime version: give the version of "
        "the " +
        p.arch + " runtime (--ort-version)");
  std::string deps = RuntimeDepsDir();
  std::string path = deps + "/ort-" + p.arch + "/" + v + "/lib/libonnxruntime.so." + v;
  std::error_code ec;
  if (deps.empty() || !std::filesystem::exists(path, ec))
    return NotFound("ONNX Runtime " + v + " for " + p.arch + " is not installed (" + path +
                    "; scripts/bootstrap.sh fetches the default version, "
                    "ONNXPROBE_ORT_AARCH64_VERSIONS=\"" +
                    v + "\" others)");
  return path;
}

std::string PlatformLocator(const Platform& p, const std::string& library) {
  return "@" + p.name + "@" + (p.remote.empty() ? library : p.remote);
}

bool SplitPlatformLocator(const std::string& locator, std::string* platform, std::string* library) {
  if (locator.size() < 3 || locator[0] != '@') return false;
  size_t at = locator.find('@', 1);
  if (at == std::string::npos) return false;
  *platform = locator.substr(1, at - 1);
  *library = locator.substr(at + 1);
  return true;
}

}  // namespace onnxprobe
