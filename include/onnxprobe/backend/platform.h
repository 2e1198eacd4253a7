// Where a side runs: this machine's CPU, or another one emulated by qemu-user (docs/platform.md).
// A side on another platform runs ONNX Runtime's build for that CPU inside onnxprobe's platform
// worker (src/backend/remote/worker), started under qemu and spoken to over its stdin/stdout; the
// graph work (marking outputs, isolating nodes) stays here, so capture, comparison, localization
// and diagnosis run on it unchanged: each session the side opens is created and run on the target.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "onnxprobe/backend/backend.h"
#include "onnxprobe/common/status.h"

namespace onnxprobe {

struct Platform {
  std::string name;  // as given: "aarch64", "aarch64:cortex-a72", "x86-64-v2", "x86-64-v3"
  std::string arch;  // the worker's and runtime's build: "aarch64" or "x86_64"
  std::string qemu;  // the emulator: "qemu-aarch64" or "qemu-x86_64"
  std::string cpu;   // its -cpu model ("max": every feature qemu emulates)
  // A device: the command that starts the worker there, speaking on its stdin/stdout ("ssh
  // board /opt/onnxprobe/run-worker.sh"; scripts/platform_bundle.sh writes that folder); no
  // qemu then, and `arch` is what the worker reports.
  std::string remote;
  std::string Describe() const;  // "aarch64 (qemu-aarch64 -cpu max)", "remote aarch64 (CMD)"
};

// A side on a device reached by `command` (--remote).
Platform RemotePlatform(const std::string& command);

// "aarch64" (qemu's "max" CPU: every Armv8/v9 feature it emulates, float16, bfloat16, i8mm,
// SVE), "aarch64:<qemu cpu>" (e.g. cortex-a57: Armv8.0 without float16 arithmetic;
// neoverse-n1; a64fx), "x86-64-v2" (Nehalem: SSE4.2, no AVX), "x86-64-v3" (Haswell: AVX2, FMA).
// Anything else is InvalidArgument listing these.
Expected<Platform> ParsePlatform(const std::string& text);

// The ONNX Runtime library of `version` ("" = this build's default version) for `p`: the x86-64
// levels run this machine's own library (`host_library`); aarch64 the PyPI aarch64 build the
// bootstrap puts in <deps>/ort-aarch64/<version>/lib (NotFound saying how to fetch another).
Expected<std::string> PlatformLibrary(const Platform& p, const std::string& version,
                                      const std::string& host_library);

// Runtime locators: every place that loads a runtime takes a library path, "@<platform>@<path>"
// (a side on that platform) or "@remote@<command>" (a device). LoadBackend opens each.
std::string PlatformLocator(const Platform& p, const std::string& library);
bool SplitPlatformLocator(const std::string& locator, std::string* platform, std::string* library);
Expected<std::shared_ptr<Backend>> LoadBackend(const std::string& locator);

// onnxprobe's worker program for `arch` ("aarch64", "x86_64") as this build made it
// ($ONNXPROBE_WORKER_DIR/<arch>/onnxprobe-worker when set); "" in a build without workers.
std::string PlatformWorkerPath(const std::string& arch);

// What a device needs to be a side (--remote 'ssh board DIR/run-worker.sh'): the worker for
// `arch` (aarch64 or x86_64), the ONNX Runtime `version` for that CPU as the bootstrap installed
// it ("" this build's), and run-worker.sh, which starts the worker on its stdin/stdout. Written
// into `dir` (absent, or an empty folder; never a symbolic link) through a temporary sibling
// renamed into place: complete or absent, also on ^C.
struct PlatformBundle {
  std::string dir, arch, version;
  std::vector<std::string> files;  // relative to dir
};
Expected<PlatformBundle> WritePlatformBundle(const std::string& arch, const std::string& dir,
                                             const std::string& version);

}  // namespace onnxprobe
