// baseline save MODEL -o BASE / baseline check MODEL BASE: a precision gate for CI.
#include "onnxprobe/baseline/baseline.h"

#include <filesystem>

#include "command/commands.h"
#include "common/file_util.h"
#include "onnxprobe/capture/samples.h"
#include "onnxprobe/common/format.h"
#include "onnxprobe/report/baseline_report.h"
#include "onnxprobe/report/junit.h"
#include "onnxprobe/report/report.h"

namespace onnxprobe::cmd {
namespace {

struct SaveCli {
  std::string model, output;
  bool force = false, quiet = false;
  SessionFlags session;
  InputFlags inputs;
  SampleOptions samples;
  ToleranceFlags tolerance;
  BaselineSaveRequest req;
};

class BaselineSaveCommand : public Command {
 public:
  const char* name() const override { return "baseline save"; }
  const char* summary() const override {
    return "run the model on input samples and store its outputs, the thresholds and the "
           "environment as a baseline folder";
  }
  void Declare(OptionSink& sink) override {
    SaveCli& o = o_;
    sink.Positional("MODEL", ".onnx model", &o.model, true);
    sink.Section("output");
    DeclareString(sink, "-o,--output", "DIR", &o.output,
                  "baseline folder (default: <model stem>.baseline)");
    DeclareSwitch(sink, "--force", &o.force,
                  "(folders are replaced only when they hold a baseline)");
    DeclareSwitch(sink, "-q,--quiet", &o.quiet, "no summary");
    sink.Section("samples");
    DeclareSampleOptions(sink, &o.samples);
    DeclareInputOptions(sink, &o.inputs);
    sink.Section("what to store besides the graph outputs");
    DeclareSelectionOptions(sink, &o.req.selection);
    DeclareSwitch(sink, "--all-tensors", &o.req.all_tensors,
                  "every intermediate tensor: a failing check localizes from them alone");
    DeclareSwitch(sink, "--keep-model", &o.req.keep_model,
                  "copy the model into the baseline: a failing check on a changed model re-runs it "
                  "to name the node that changed the numbers");
    sink.Section("runtime (recorded in the baseline; check runs with the same settings)");
    DeclareSessionOptions(sink, "", &o.session);
    DeclareMaxMemory(sink, &o.req.max_memory, "captured bytes alive at once (e.g. 512M)");
    DeclareToleranceOptions(sink, &o.tolerance);
  }

  Status Validate() override {
    SaveCli& o = o_;
    if (o.output.empty()) o.output = std::filesystem::path(o.model).stem().string() + ".baseline";
    if (o.req.all_tensors && (!o.req.selection.names.empty() || !o.req.selection.op_types.empty() ||
                              !o.req.selection.regex.empty())) {
      return InvalidArgument(
          "--all-tensors stores every tensor: --tensors, --op-types and "
          "--regex would do nothing");
    }
    o.tolerance.ApplyTo(&o.req.policy);
    OP_RETURN_IF_ERROR(o.req.policy.Validate());
    std::vector<std::string> inputs = InputFilePaths(o.inputs);
    inputs.push_back(o.model);
    if (!o.samples.inputs_dir.empty()) inputs.push_back(o.samples.inputs_dir);
    return CheckOutput("-o", o.output, OutputKind::kBaseline, inputs, o.force);
  }

  Expected<CommandOutput> Execute(const CommandContext& context) override {
    SaveCli& o = o_;
    BaselineSaveRequest& req = o.req;
    req.model_path = o.model;
    req.output = o.output;
    req.samples = o.samples;
    req.samples.base = o.inputs.options;
    req.session = o.session.session;
    OP_ASSIGN_OR_RETURN(req.ort_library, ResolveOrtLibrary(o.session));
    if (context.progress && !o.quiet)
      req.on_sample = [&](size_t d, size_t t) {
        return context.progress({Phase::kSample, d, t, ""});
      };
    auto saved = SaveBaseline(req);
    req.on_sample = nullptr;  // it refers to `context`, which ends with this call
    if (!saved.ok()) return NameSampleFlag(saved.status(), o.samples);
    CommandOutput out;
    for (const auto& n : saved->notes) out.Note(n);
    if (o.quiet) return out;
    const Baseline& b = saved->baseline;
    const Environment& e = b.environment;
    auto plural = [](size_t n) { return n == 1 ? "" : "s"; };
    out.text = "baseline: " + std::to_string(b.samples.size()) + " sample" +
               plural(b.samples.size()) + " x " + std::to_string(b.tensors.size()) + " tensor" +
               plural(b.tensors.size()) + " of " + o.model + " (" +
               FormatBytes(saved->bytes_written) + ", " + StringPrintf("%.2f s", saved->seconds) +
               "), onnxruntime " + e.runtime_version + " " + e.session.provider +
               ", optimizations " + OptLevelName(e.session.optimization_level) + "\n";
    out.text += "thresholds: atol " + FormatNumber(b.policy.global.atol) + ", rtol " +
                FormatNumber(b.policy.global.rtol) + ", judge " + JudgeByName(b.policy.judge) +
                "; " + std::to_string(b.policy.rules.size()) + " rule" +
                plural(b.policy.rules.size()) + "\n";
    out.text += "saved: " + o.output + "\n";
    return out;
  }

 private:
  SaveCli o_;
};

struct CheckCli {
  std::string model, base, junit, json, html;
  bool force = false, quiet = false;
  size_t localize_samples = 1;
  uint64_t max_memory = 0;
  SessionFlags session;
  SampleShard shard;
  bool shard_given = false;
};

class BaselineCheckCommand : public Command {
 public:
  const char* name() const override { return "baseline check"; }
  const char* summary() const override {
    return "re-run every sample of a baseline, compare under its thresholds, report environment "
           "changes and name the node where a failing sample diverges";
  }
  std::string footer() const override {
    return "Runtime options given here replace the baseline's recorded ones (reported as "
           "environment changes).";
  }
  void Declare(OptionSink& sink) override {
    CheckCli& o = o_;
    sink.Positional("MODEL", ".onnx model (the build under test)", &o.model, true);
    sink.Positional("BASE", "baseline folder from `onnxprobe baseline save`", &o.base, true);
    sink.Section("reports");
    DeclareString(sink, "--junit", "FILE", &o.junit,
                  "JUnit XML: a test case per sample x stored tensor");
    sink.Add({"--json", "FILE", "JSON report (schema onnxprobe-baseline-check)"},
             [&o](const std::string& v) { return SetJsonFile(v, &o.json); });
    DeclareString(sink, "--html", "FILE", &o.html,
                  "HTML report of the first failing sample's localization (else the sample closest "
                  "to its tolerance)");
    DeclareSwitch(sink, "--force", &o.force,
                  "replace existing files that are not onnxprobe reports of the same kind");
    DeclareSwitch(sink, "-q,--quiet", &o.quiet, "verdict line only");
    sink.Add({"--localize", "N",
              "localize the first N failing samples (default 1; 0: none): a sample without "
              "stored intermediates costs two full captures"},
             [&o](const std::string& v) -> Status {
               OP_ASSIGN_OR_RETURN(int64_t n, ParseInt(v, "--localize"));
               if (n < 0 || n > 100000)
                 return InvalidArgument("--localize must be between 0 and 100000");
               o.localize_samples = static_cast<size_t>(n);
               return Status::Ok();
             });
    DeclareShardOption(sink, "of the baseline's samples", &o.shard, &o.shard_given);
    sink.Section("runtime (default: the baseline's)");
    DeclareSessionOptions(sink, "", &o.session);
    DeclareMaxMemory(sink, &o.max_memory, "tensors alive at once (e.g. 1G)");
  }

  Status Validate() override {
    CheckCli& o = o_;
    OP_RETURN_IF_ERROR(
        CheckDistinctOutputs({{"--junit", o.junit}, {"--json", o.json}, {"--html", o.html}}));
    std::vector<std::string> inputs = {o.model, o.base};
    if (!o.junit.empty())
      OP_RETURN_IF_ERROR(CheckOutput("--junit", o.junit, SinkArtifact("junit"), inputs, o.force));
    if (!o.json.empty()) {
      OP_RETURN_IF_ERROR(
          CheckOutput("--json", o.json, OutputKind::kBaselineCheckJson, inputs, o.force));
    }
    if (!o.html.empty())
      OP_RETURN_IF_ERROR(CheckOutput("--html", o.html, SinkArtifact("html"), inputs, o.force));
    return Status::Ok();
  }

  Expected<CommandOutput> Execute(const CommandContext& context) override {
    CheckCli& o = o_;
    OP_ASSIGN_OR_RETURN(Baseline baseline, ReadBaseline(o.base));
    BaselineCheckRequest req;
    req.model_path = o.model;
    req.baseline_dir = o.base;
    SessionFlags recorded;
    recorded.session = baseline.environment.session;
    req.session = MergeSessionFlags(recorded, o.session).session;
    req.session_given = true;
    OP_ASSIGN_OR_RETURN(req.ort_library, ResolveOrtLibrary(o.session));
    req.localize = o.localize_samples > 0;
    req.max_localized_samples = o.localize_samples;
    req.max_memory = o.max_memory;
    req.shard = o.shard;
    if (context.progress && !o.quiet)
      req.on_sample = [&](size_t d, size_t t) {
        return context.progress({Phase::kSample, d, t, ""});
      };
    auto checked = CheckBaseline(req);
    req.on_sample = nullptr;
    OP_ASSIGN_OR_RETURN(BaselineCheckReport r, std::move(checked));
    bool nothing_compared = true;
    for (const auto& s : r.samples) nothing_compared &= s.report.comparison.rows.empty();
    // nothing compared (e.g. a provider this runtime lacks): the error alone, as compare does
    if (r.aborted && nothing_compared) return r.abort_status;
    CommandOutput out;
    out.documents["json"] = RenderBaselineCheckJson(r);
    out.documents["junit"] = RenderJUnit("onnxprobe baseline check", BaselineCheckJUnit(r));
    const CompareReport* focus = BaselineCheckFocus(r);
    if (focus != nullptr) out.documents["html"] = MakeHtmlReporter()->Render(*focus);
    if (!o.junit.empty()) OP_RETURN_IF_ERROR(WriteFileAtomic(o.junit, out.documents["junit"]));
    if (!o.json.empty()) OP_RETURN_IF_ERROR(WriteFileAtomic(o.json, out.documents["json"]));
    if (!o.html.empty() && focus != nullptr)
      OP_RETURN_IF_ERROR(WriteFileAtomic(o.html, out.documents["html"]));
    std::string text = RenderBaselineCheckConsole(r);
    if (o.quiet) text = text.substr(text.rfind("verdict:"));
    if (!o.junit.empty()) text += "JUnit report: " + o.junit + "\n";
    if (r.shard.sharded()) {
      text += "shard " + std::to_string(r.shard.index) + "/" + std::to_string(r.shard.count) +
              ": " + std::to_string(r.samples.size()) + " of " +
              std::to_string(r.baseline.samples.size()) +
              " samples (onnxprobe merge joins the shards' --json)\n";
    }
    if (!o.json.empty()) text += "JSON report: " + o.json + "\n";
    if (!o.html.empty() && focus != nullptr) text += "HTML report: " + o.html + "\n";
    out.text = std::move(text);
    if (r.aborted) out.error = r.abort_status;
    out.exit_code = r.passed() ? kExitOk : kExitMismatch;
    return out;
  }

 private:
  CheckCli o_;
};

}  // namespace

std::unique_ptr<Command> MakeBaselineSaveCommand() {
  return std::make_unique<BaselineSaveCommand>();
}
std::unique_ptr<Command> MakeBaselineCheckCommand() {
  return std::make_unique<BaselineCheckCommand>();
}

}  // namespace onnxprobe::cmd
