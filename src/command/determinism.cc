// onnxprobe determinism MODEL: is every tensor the same run after run?
#include "onnxprobe/capture/determinism.h"

#include "command/commands.h"
#include "common/file_util.h"
#include "onnxprobe/report/determinism_report.h"

namespace onnxprobe::cmd {
namespace {

class DeterminismCommand : public Command {
 public:
  const char* name() const override { return "determinism"; }
  const char* summary() const override {
    return "run several times (and with other thread settings); name the first tensor that is "
           "not reproducible";
  }
  std::string footer() const override {
    return "Runs MODEL several times in one session and in a fresh one, and once with other "
           "thread\nsettings; compares every intermediate tensor bitwise with the first run. "
           "Exit 1 when the\ngraph outputs differ between runs with the same settings.";
  }
  void Declare(OptionSink& sink) override {
    sink.Positional("MODEL", ".onnx model", &req_.model, true);
    sink.Section("runs");
    sink.Add({"--runs", "N", "runs in the reference session (default 3)"},
             [this](const std::string& v) -> Status {
               OP_ASSIGN_OR_RETURN(int64_t n, ParseInt(v, "--runs"));
               if (n < 2 || n > 1000) return InvalidArgument("--runs must be between 2 and 1000");
               req_.runs = static_cast<int>(n);
               return Status::Ok();
             });
    sink.Add({"--no-settings", "", "skip the intra-op thread and execution-mode variations"},
             [this](const std::string&) {
               req_.vary_threads = req_.vary_execution = false;
               return Status::Ok();
             });
    sink.Section("output");
    DeclareString(sink, "--save-noise-floor", "FILE", &noise_file_,
                  "per-tensor run-to-run differences, for compare --noise-floor");
    sink.Add({"--json", "FILE", "the report as JSON"},
             [this](const std::string& v) { return SetJsonFile(v, &json_file_); });
    DeclareSwitch(sink, "--force", &force_,
                  "replace existing files that are not onnxprobe outputs of the kind");
    sink.Section("what to compare");
    DeclareSelectionOptions(sink, &req_.selection);
    DeclareInputOptions(sink, &inputs_);
    sink.Section("runtime (the reference settings)");
    DeclareSessionOptions(sink, "", &session_);
    DeclareMaxMemory(sink, &req_.max_memory, "bytes of tensors held at once (e.g. 512M)");
  }

  Status Validate() override {
    std::vector<std::string> inputs = InputFilePaths(inputs_);
    inputs.push_back(req_.model);
    OP_RETURN_IF_ERROR(
        CheckDistinctOutputs({{"--json", json_file_}, {"--save-noise-floor", noise_file_}}));
    if (!json_file_.empty()) {
      OP_RETURN_IF_ERROR(
          CheckOutput("--json", json_file_, OutputKind::kDeterminismJson, inputs, force_));
    }
    if (!noise_file_.empty()) {
      OP_RETURN_IF_ERROR(
          CheckOutput("--save-noise-floor", noise_file_, OutputKind::kNoiseFloor, inputs, force_));
    }
    return Status::Ok();
  }

  Expected<CommandOutput> Execute(const CommandContext& /*context*/) override {
    req_.inputs = inputs_.options;
    req_.session = session_.session;
    OP_ASSIGN_OR_RETURN(req_.ort_library, ResolveOrtLibrary(session_));
    OP_ASSIGN_OR_RETURN(DeterminismReport rep, CheckDeterminism(req_));
    CommandOutput out;
    out.documents["json"] = RenderDeterminismJson(rep);
    if (!json_file_.empty()) OP_RETURN_IF_ERROR(WriteFileAtomic(json_file_, out.documents["json"]));
    if (!noise_file_.empty()) OP_RETURN_IF_ERROR(WriteNoiseFloor(rep, false, noise_file_));
    out.text = RenderDeterminismText(rep);
    if (!json_file_.empty()) out.text += "JSON report: " + json_file_ + "\n";
    if (!noise_file_.empty())
      out.text += "noise floor: " + noise_file_ + " (compare --noise-floor " + noise_file_ + ")\n";
    out.exit_code = rep.outputs_reproducible ? kExitOk : kExitMismatch;
    return out;
  }

 private:
  DeterminismRequest req_;
  InputFlags inputs_;
  SessionFlags session_;
  std::string noise_file_, json_file_;
  bool force_ = false;
};

}  // namespace

std::unique_ptr<Command> MakeDeterminismCommand() { return std::make_unique<DeterminismCommand>(); }

}  // namespace onnxprobe::cmd
