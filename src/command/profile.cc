// onnxprobe profile MODEL: per-node time from ONNX Runtime's profiler, grouped by op type and
// provider, with latency and peak memory.
#include "onnxprobe/profile/profile.h"

#include "command/commands.h"
#include "onnxprobe/report/profile_report.h"

namespace onnxprobe::cmd {
namespace {

class ProfileCommand : public Command {
 public:
  const char* name() const override { return "profile"; }
  const char* summary() const override {
    return "per-node time from ONNX Runtime's profiler: by op type, by provider, top nodes, "
           "placement, latency, peak memory";
  }
  std::string footer() const override {
    return "Runs MODEL (1 warm-up run, then --runs measured runs) with ONNX Runtime's profiler on "
           "and\nreports each node's median time over the measured runs. The runtime options are "
           "those of\n`run` (optimizations off by default: --opt-level all profiles the graph a "
           "deployment runs).";
  }
  void Declare(OptionSink& sink) override {
    sink.Positional("MODEL", ".onnx model", &req_.model_path, true);
    sink.Section("runs");
    sink.Add({"--runs", "N", "measured runs (default 5)"}, [this](const std::string& v) -> Status {
      OP_ASSIGN_OR_RETURN(int64_t n, ParseInt(v, "--runs"));
      if (n < 1 || n > 10000) return InvalidArgument("--runs must be between 1 and 10000");
      req_.runs.runs = static_cast<int>(n);
      return Status::Ok();
    });
    sink.Add({"--warmup", "N", "runs before the measured ones (default 1)"},
             [this](const std::string& v) -> Status {
               OP_ASSIGN_OR_RETURN(int64_t n, ParseInt(v, "--warmup"));
               if (n < 0 || n > 1000) return InvalidArgument("--warmup must be between 0 and 1000");
               req_.runs.warmup = static_cast<int>(n);
               return Status::Ok();
             });
    sink.Section("output");
    sink.Add(JsonOption("print the profile as JSON (docs/profile.md)"),
             [this](const std::string& v) { return SetJsonOutput(v, &json_); });
    DeclareString(
        sink, "--trace", "FILE", &req_.trace_output,
        "keep ONNX Runtime's trace (Chrome trace-event JSON: chrome://tracing, Perfetto)");
    DeclareSwitch(sink, "--force", &force_,
                  "replace an existing file that is not a profiler trace");
    sink.Add({"--top", "N", "slowest nodes listed (default 10)"},
             [this](const std::string& v) -> Status {
               OP_ASSIGN_OR_RETURN(int64_t n, ParseInt(v, "--top"));
               if (n < 1) return InvalidArgument("--top must be at least 1");
               top_ = static_cast<size_t>(n);
               top_given_ = true;
               return Status::Ok();
             });
    DeclareInputOptions(sink, &inputs_);
    sink.Section("runtime");
    DeclareSessionOptions(sink, "", &session_);
  }
  Status Validate() override {
    if (json_.on && json_.file.empty() && top_given_) {
      return InvalidArgument("--top does nothing with --json (the JSON lists every node)");
    }
    std::vector<std::string> inputs = InputFilePaths(inputs_);
    inputs.push_back(req_.model_path);
    OP_RETURN_IF_ERROR(CheckJsonOutput(json_, inputs, force_));
    if (!json_.file.empty() && json_.file == req_.trace_output)
      return InvalidArgument("--json and --trace name the same file '" + json_.file + "'");
    if (req_.trace_output.empty()) return Status::Ok();
    return CheckOutput("--trace", req_.trace_output, OutputKind::kProfileTrace, inputs, force_);
  }
  Expected<CommandOutput> Execute(const CommandContext& /*context*/) override {
    req_.inputs = inputs_.options;
    req_.session = session_.session;
    OP_ASSIGN_OR_RETURN(req_.ort_library, ResolveOrtLibrary(session_));
    OP_ASSIGN_OR_RETURN(ProfileReport report, Profile(req_));
    CommandOutput out;
    for (const auto& n : report.notes) out.Note(n);
    out.documents["json"] = RenderProfileJson(report);
    OP_ASSIGN_OR_RETURN(
        out.text, ConsoleWithJson(json_, RenderProfileText(report, top_), out.documents["json"]));
    return out;
  }

 private:
  ProfileRequest req_;
  InputFlags inputs_;
  SessionFlags session_;
  JsonOutput json_;
  bool top_given_ = false, force_ = false;
  size_t top_ = 10;
};

}  // namespace

std::unique_ptr<Command> MakeProfileCommand() { return std::make_unique<ProfileCommand>(); }

}  // namespace onnxprobe::cmd
