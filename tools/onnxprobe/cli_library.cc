// The command line's side of the library's commands and shared JSON option: printing what the
// library returned.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "cli.h"

namespace onnxprobe::cli {
namespace {

class LibraryCommand : public Command {
 public:
  explicit LibraryCommand(std::unique_ptr<cmd::Command> command) : command_(std::move(command)) {}
  const char* name() const override { return command_->name(); }
  const char* summary() const override { return command_->summary(); }
  std::string footer() const override { return command_->footer(); }
  void Declare(OptionSink& sink) override { command_->Declare(sink); }
  Status Validate() override { return command_->Validate(); }
  int Run() override {
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
    auto out = command_->Execute(context);
    line.Done();
    if (!out.ok()) return Fail(out.status());
    for (const std::string& n : out->notes) std::fprintf(stderr, "onnxprobe: %s\n", n.c_str());
    std::fputs(out->text.c_str(), stdout);
    if (!out->error.ok()) {
      std::fflush(stdout);
      return Fail(out->error);
    }
    return out->exit_code;
  }

 private:
  std::unique_ptr<cmd::Command> command_;
};

}  // namespace

std::unique_ptr<Command> AdaptLibraryCommand(std::unique_ptr<cmd::Command> command) {
  return std::make_unique<LibraryCommand>(std::move(command));
}

Status EmitJson(const JsonOutput& out, const std::string& text) {
  auto console = cmd::ConsoleWithJson(out, "", text);
  if (!console.ok()) return console.status();
  std::fputs(console->c_str(), stdout);
  return Status::Ok();
}

Status PrintWithJson(const JsonOutput& out, const std::string& text, const std::string& json) {
  auto console = cmd::ConsoleWithJson(out, text, json);
  if (!console.ok()) return console.status();
  std::fputs(console->c_str(), stdout);
  return Status::Ok();
}

}  // namespace onnxprobe::cli
