// onnxprobe command line: parse -> options -> library call -> exit code.
#include <cstdio>
#include <exception>

#include "cli.h"
#include "onnxprobe/common/cleanup.h"

int main(int argc, char** argv) {
  (void)onnxprobe::InstallTemporaryCleanup();  // ^C or kill leaves no *.tmp-* behind
  onnxprobe::cli::GuardStdout();
  int rc = onnxprobe::cmd::kExitRuntime;
  try {
    rc = onnxprobe::cli::RunCli(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "onnxprobe: internal error: %s\n", e.what());
  }
  // a report that did not reach stdout is a failed write (exit 2), whatever the verdict was
  onnxprobe::Status out = onnxprobe::cli::FinishStdout();
  return out.ok() ? rc : onnxprobe::cli::Fail(out);
}
