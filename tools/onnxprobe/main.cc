// onnxprobe command line: parse -> options -> library call -> exit code.
#include <cstdio>
#include <exception>

#include "cli.h"
#include "onnxprobe/cleanup.h"

int main(int argc, char** argv) {
  (void)onnxprobe::InstallTemporaryCleanup();  // ^C or kill leaves no *.tmp-* behind
  try {
    return onnxprobe::cli::RunCli(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "onnxprobe: internal error: %s\n", e.what());
    return onnxprobe::cli::kExitBackend;
  }
}
