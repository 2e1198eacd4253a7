// lint MODEL [--json] [--fail-on LEVEL] [--disable CODES] [--ort-lib P | --ort-version V
//                      | --runtime-version V] [--list-rules]
#include "onnxprobe/lint/lint.h"

#include "command/commands.h"
#include "onnxprobe/backend/backend.h"
#include "onnxprobe/backend/platform.h"
#include "onnxprobe/common/format.h"
#include "onnxprobe/model/model.h"
#include "onnxprobe/report/lint_report.h"

namespace onnxprobe::cmd {
namespace {

class LintCommand : public Command {
 public:
  const char* name() const override { return "lint"; }
  const char* summary() const override {
    return "static findings: training-mode remnants, baked shapes, fp16 hazards, ... (why, fix)";
  }
  std::string footer() const override {
    return "exit 1 here means a finding at or above --fail-on (default error).\n"
           "rules: onnxprobe lint --list-rules and docs/lint.md";
  }
  void Declare(OptionSink& sink) override {
    sink.Positional("MODEL", ".onnx model", &model_, false);
    sink.Add(JsonOption("machine-readable output (schema onnxprobe-lint)"),
             [this](const std::string& v) { return SetJsonOutput(v, &json_); });
    sink.Add({"--fail-on", "LEVEL",
              "exit 1 when a finding is at least LEVEL: error (default), warning, info, or none"},
             [this](const std::string& v) -> Status {
               if (v == "none") {
                 fail_never_ = true;
                 return Status::Ok();
               }
               auto s = ParseLintSeverity(v);
               if (!s.ok())
                 return InvalidArgument("--fail-on: expected error, warning, info or none, got '" +
                                        v + "'");
               fail_on_ = *s;
               return Status::Ok();
             });
    sink.Add({"--disable", "CODES", "rules not to run (codes or names, comma-separated)", true},
             [this](const std::string& v) {
               for (const auto& c : SplitList(v)) lint_.disabled.insert(c);
               return Status::Ok();
             });
    DeclareString(sink, "--ort-lib", "PATH", &ort_lib_,
                  "check opset/IR support against this ONNX Runtime library");
    DeclareString(sink, "--ort-version", "V", &ort_version_,
                  "... against the bootstrap's ONNX Runtime V");
    DeclareString(sink, "--runtime-version", "V", &runtime_version_,
                  "... against ONNX Runtime version V, without loading it");
    DeclareSwitch(sink, "--list-rules", &list_rules_, "print the rules and exit");
  }
  Status Validate() override {
    int given = !ort_lib_.empty() + !ort_version_.empty() + !runtime_version_.empty();
    if (given > 1)
      return InvalidArgument("give one of --ort-lib, --ort-version and --runtime-version");
    if (list_rules_ && !model_.empty()) return InvalidArgument("--list-rules takes no MODEL");
    if (!list_rules_ && model_.empty()) return InvalidArgument("lint: no MODEL given");
    for (const std::string& d : lint_.disabled) {
      bool known = false;
      for (const LintRuleInfo& r : LintRules()) known |= r.code == d || r.name == d;
      if (!known)
        return InvalidArgument("--disable: unknown rule '" + d +
                               "' (onnxprobe lint --list-rules shows the codes)");
    }
    return CheckJsonOutput(json_, {model_}, false);
  }
  Expected<CommandOutput> Execute(const CommandContext& /*context*/) override {
    CommandOutput out;
    if (list_rules_) {
      for (const LintRuleInfo& r : LintRules()) {
        out.text += StringPrintf("%s  %-7s  %-26s %s\n", r.code.c_str(),
                                 LintSeverityName(r.severity), r.name.c_str(), r.summary.c_str());
      }
      return out;
    }
    OP_ASSIGN_OR_RETURN(Model model, Model::Load(model_));
    lint_.runtime_version = RuntimeVersion(&out);
    OP_ASSIGN_OR_RETURN(LintReport report, Lint(model, lint_));
    out.documents["json"] = RenderLintJson(report);
    OP_ASSIGN_OR_RETURN(out.text,
                        ConsoleWithJson(json_, RenderLintText(report), out.documents["json"]));
    if (!fail_never_ && report.CountAtLeast(fail_on_) > 0) out.exit_code = kExitMismatch;
    return out;
  }

 private:
  // The version of the runtime the model is checked against: given, or asked of the library.
  std::string RuntimeVersion(CommandOutput* out) const {
    if (!runtime_version_.empty()) return runtime_version_;
    std::string lib = ort_lib_;
    if (!ort_version_.empty()) {
      auto path = OrtLibraryForVersion(ort_version_);
      if (!path.ok()) {
        out->Note("--ort-version: " + path.status().message() + "; opset support not checked");
        return "";
      }
      lib = *path;
    }
    auto backend = LoadBackend(lib);
    if (!backend.ok()) {
      out->Note("ONNX Runtime not loaded (" + backend.status().message() +
                "); opset support not checked");
      return "";
    }
    return (*backend)->version();
  }

  std::string model_, ort_lib_, ort_version_, runtime_version_;
  JsonOutput json_;
  bool list_rules_ = false, fail_never_ = false;
  LintSeverity fail_on_ = LintSeverity::kError;
  LintOptions lint_;
};

}  // namespace

std::unique_ptr<Command> MakeLintCommand() { return std::make_unique<LintCommand>(); }

}  // namespace onnxprobe::cmd
