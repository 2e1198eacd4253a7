// onnxprobe command line: parse -> options -> library call -> exit code.
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>

#include "cli.h"
#include "onnxprobe/backend.h"
#include "onnxprobe/cleanup.h"
#include "onnxprobe/version.h"

namespace {

constexpr const char* kUsage =
    "usage: onnxprobe <command> [options]\n"
    "\n"
    "commands:\n"
    "  inspect MODEL     model summary: inputs, outputs, opsets, ops, parameters, hashes\n"
    "                    (--tensors lists every tensor in topological order; --json)\n"
    "  run MODEL         run with ONNX Runtime and dump intermediate tensors (.npy folder or "
    ".npz)\n"
    "  compare A [B]     compare two sides tensor by tensor (models run live, or dumps) and find\n"
    "                    the node where error is introduced; terminal, JSON and HTML reports\n"
    "  replay DIR        rerun a repro bundle written by compare --repro\n"
    "  determinism MODEL run several times (and with other thread settings); name the first\n"
    "                    tensor that is not reproducible\n"
    "  --version         onnxprobe and ONNX Runtime versions\n"
    "\n"
    "onnxprobe <command> --help shows the options of a command.\n"
    "exit codes: 0 ok, 1 mismatch, 2 bad input or usage, 3 runtime failure\n";

int PrintVersion() {
  std::printf("onnxprobe %s\n", onnxprobe::Version());
  auto backend = onnxprobe::LoadOrtBackend();
  if (backend.ok()) {
    std::printf("onnxruntime %s (%s)\n", (*backend)->version().c_str(),
                (*backend)->library_path().c_str());
    return 0;
  }
  std::printf("onnxruntime not loaded: %s\n", backend.status().message().c_str());
  return onnxprobe::cli::ExitCodeFor(backend.status());
}

}  // namespace

int main(int argc, char** argv) {
  (void)onnxprobe::InstallTemporaryCleanup();  // ^C or kill leaves no *.tmp-* behind
  try {
    if (argc < 2) {
      std::fputs(kUsage, stderr);
      return onnxprobe::cli::kExitBadInput;
    }
    std::string cmd = argv[1];
    onnxprobe::cli::Args args(argc, argv, 2);
    if (cmd == "--version" || cmd == "version") return PrintVersion();
    if (cmd == "--help" || cmd == "-h" || cmd == "help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    if (cmd == "inspect") return onnxprobe::cli::RunInspect(args);
    if (cmd == "run") return onnxprobe::cli::RunRun(args);
    if (cmd == "compare") return onnxprobe::cli::RunCompare(args);
    if (cmd == "replay") return onnxprobe::cli::RunReplay(args);
    if (cmd == "determinism") return onnxprobe::cli::RunDeterminism(args);
    std::fprintf(stderr, "onnxprobe: error: unknown command '%s'\n%s", cmd.c_str(), kUsage);
    return onnxprobe::cli::kExitBadInput;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "onnxprobe: internal error: %s\n", e.what());
    return onnxprobe::cli::kExitBackend;
  }
}
