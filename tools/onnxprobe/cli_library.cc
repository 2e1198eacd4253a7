// The command line's side of the library's commands: running one and printing what it returns.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "cli.h"

namespace onnxprobe::cli {

int RunLibraryCommand(cmd::Command& command) {
  ProgressLine line(isatty(STDERR_FILENO), "");
  cmd::CommandContext context;
  context.progress = [&line](const std::string& phase, size_t done, size_t total) {
    // what is counted, where the phase's words do not say it
    bool rows = phase.size() >= 9 && phase.compare(phase.size() - 9, 9, "comparing") == 0;
    const char* unit = rows ? "tensors" : phase == "isolating nodes:" ? "runs" : "";
    line.SetVerb(phase);
    if (total == 0) {
      line.Count(done, unit);
    } else {
      line.Update(done, total, unit);
    }
    return true;
  };
  context.color = isatty(STDOUT_FILENO) && std::getenv("NO_COLOR") == nullptr;
  context.documents = false;
  auto out = command.Execute(context);
  line.Done();
  if (!out.ok()) return Fail(out.status());
  for (const std::string& n : cmd::DistinctNotes(out->notes))
    std::fprintf(stderr, "onnxprobe: %s\n", n.c_str());
  std::fputs(out->text.c_str(), stdout);
  if (!out->error.ok()) {
    std::fflush(stdout);
    return Fail(out->error);
  }
  return out->exit_code;
}

}  // namespace onnxprobe::cli
