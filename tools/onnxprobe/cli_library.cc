// The command line's side of the library's commands: running one and printing what it returns.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <map>

#include "cli.h"

namespace onnxprobe::cli {

int RunLibraryCommand(cmd::Command& command) {
  ProgressLine line(isatty(STDERR_FILENO), "");
  cmd::CommandContext context;
  context.progress = [&line](const cmd::ProgressEvent& e) {
    // the phase in words, and what it counts
    struct Shown {
      const char* verb;
      const char* unit;
    };
    static const std::map<cmd::Phase, Shown> kShown = {
        {cmd::Phase::kCompare, {"comparing", "tensors"}},
        {cmd::Phase::kIsolate, {"isolating nodes:", "runs"}},
        {cmd::Phase::kSample, {"sample", ""}},
        {cmd::Phase::kCapture, {"capturing", ""}},
        {cmd::Phase::kGenerate, {"generating: step", ""}}};
    const Shown& shown = kShown.at(e.phase);
    line.SetVerb(e.within.empty() ? shown.verb : e.within + ": " + shown.verb);
    if (e.total == 0) {
      line.Count(e.done, shown.unit);
    } else {
      line.Update(e.done, e.total, shown.unit);
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
