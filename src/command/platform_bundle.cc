// platform-bundle ARCH DIR: the folder a device runs as a side (backend/platform.h).
#include "command/commands.h"
#include "onnxprobe/backend/platform.h"

namespace onnxprobe::cmd {
namespace {

class PlatformBundleCommand : public Command {
 public:
  const char* name() const override { return "platform-bundle"; }
  const char* summary() const override {
    return "write onnxprobe's worker and ONNX Runtime for a device's CPU into a folder";
  }
  std::string footer() const override {
    return "Copy DIR to the device; then it is a side of any command with session options:\n"
           "  onnxprobe compare model.onnx --b-remote 'ssh board DIR/run-worker.sh'\n"
           "DIR holds onnxprobe-worker (the aarch64 one needs glibc 2.17+ only), lib/ (the\n"
           "runtime the bootstrap installed for that CPU) and run-worker.sh. DIR must not exist\n"
           "or be empty; it is written complete or not at all (docs/platform.md).";
  }
  void Declare(OptionSink& sink) override {
    sink.Positional("ARCH", "the device's CPU: aarch64 or x86_64", &arch_, true);
    sink.Positional("DIR", "folder to write (absent or empty)", &dir_, true);
    DeclareString(sink, "--ort-version", "X.Y.Z", &version_,
                  "ONNX Runtime version for the device (default: this build's)");
  }

  Expected<CommandOutput> Execute(const CommandContext& /*context*/) override {
    OP_ASSIGN_OR_RETURN(PlatformBundle b, WritePlatformBundle(arch_, dir_, version_));
    CommandOutput out;
    out.text = b.dir + ": onnxprobe's " + b.arch + " worker, ONNX Runtime " + b.version + " (" +
               std::to_string(b.files.size() - 2) +
               " libraries under lib/) and run-worker.sh\n"
               "copy it to the device, then here: onnxprobe compare model.onnx --b-remote 'ssh "
               "board <its folder there>/run-worker.sh'\n";
    return out;
  }

 private:
  std::string arch_, dir_, version_;
};

}  // namespace

std::unique_ptr<Command> MakePlatformBundleCommand() {
  return std::make_unique<PlatformBundleCommand>();
}

}  // namespace onnxprobe::cmd
