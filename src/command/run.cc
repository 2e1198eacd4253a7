// run MODEL: capture intermediate tensors into a dump folder or .npz (or a dump per sample).
#include <cstdio>
#include <filesystem>

#include "command/commands.h"
#include "onnxprobe/capture/dump.h"
#include "onnxprobe/capture/samples.h"
#include "onnxprobe/command/capture_plan.h"
#include "onnxprobe/common/format.h"
#include "onnxprobe/common/json.h"

namespace onnxprobe::cmd {
namespace {

struct RunOptions {
  std::string model, output;
  SessionFlags session;
  JsonOutput json;
  bool quiet = false, force = false, fail_on_nonfinite = false;
  TensorSelection selection;
  InputFlags inputs;
  SampleOptions samples;
  CaptureOptions capture;
  bool output_defaulted = false;
  bool float64 = false;  // --precision float64
};

// One line: where NaN/Inf first appear. A first tensor whose producing node has only finite
// inputs is where they are born.
std::string NonfiniteLine(const NonfiniteTensor& f, size_t tensors) {
  std::string where = f.is_input ? "graph input" : f.op_type + " node '" + f.node + "'";
  return "'" + f.name + "' (" + where + ") holds " + std::to_string(f.nan_count) + " NaN and " +
         std::to_string(f.inf_count) + " Inf of " + std::to_string(f.elements) +
         " values; the first of " + std::to_string(tensors) + " tensor" +
         (tensors == 1 ? "" : "s") + " with NaN/Inf in topological order";
}

class RunCommand : public Command {
 public:
  const char* name() const override { return "run"; }
  const char* summary() const override {
    return "run with ONNX Runtime and dump intermediate tensors (.npy folder or .npz)";
  }
  void Declare(OptionSink& sink) override {
    sink.Positional("MODEL", ".onnx model", &o_.model, true);
    sink.Section("output");
    sink.Add({"-o,--output", "PATH",
              "dump folder (one .npy per tensor + manifest.json) or FILE.npz "
              "(default: <model stem>.dump)"},
             [this](const std::string& v) -> Status {
               if (v.empty()) return InvalidArgument("-o: empty path");
               o_.output = v;
               return Status::Ok();
             });
    DeclareSwitch(sink, "--force", &o_.force,
                  "replace an existing file that is not an onnxprobe dump");
    sink.Add(JsonOption("print the run summary as JSON"),
             [this](const std::string& v) { return SetJsonOutput(v, &o_.json); });
    DeclareSwitch(sink, "-q,--quiet", &o_.quiet, "no progress and no summary");
    DeclareSwitch(
        sink, "--fail-on-nonfinite", &o_.fail_on_nonfinite,
        "name the first tensor (topological order) holding NaN or Inf and its node; exit 1");
    sink.Section("what to capture (default: every intermediate tensor)");
    DeclareSelectionOptions(sink, &o_.selection);
    DeclareInputOptions(sink, &o_.inputs);
    DeclareSampleOptions(sink, &o_.samples);
    sink.Section("runtime");
    sink.Add(
        {"--precision", "P",
         "float32 (default): the model as it is; float64: its exact reference, every "
         "floating-point tensor computed in float64 (docs/metrics.md, \"The exact "
         "reference\")"},
        [this](const std::string& v) -> Status {
          if (v != "float32" && v != "float64")
            return InvalidArgument("--precision: expected float32 or float64, got '" + v + "'");
          o_.float64 = v == "float64";
          return Status::Ok();
        });
    DeclareSessionOptions(sink, "", &o_.session);
    DeclareMaxMemory(sink, &o_.capture.max_memory,
                     "captured bytes alive at once (e.g. 512M); splits into runs");
    DeclareSwitch(sink, "--check-observer", &o_.capture.check_observer,
                  "confirm graph outputs are identical with and without capture");
    DeclareSwitch(
        sink, "--capture-fused", &o_.capture.mark_fused_tensors,
        "with optimizations on, also capture tensors the optimized graph fuses away (marking "
        "them blocks those fusions: the run then measures another graph)");
  }

  bool SamplesGiven() const { return !o_.samples.inputs_dir.empty() || o_.samples.count > 0; }

  // Tensors the caller keeps (PlanCapture): nothing is written, so the output options are
  // refused; `tensors` are inputs given as arrays.
  void KeepInMemory(std::vector<NamedTensor> tensors, std::string default_ort_library) {
    in_memory_ = true;
    o_.inputs.options.tensors = std::move(tensors);
    default_ort_library_ = std::move(default_ort_library);
  }

  // In memory, the first option given that only shapes what is written.
  Status CheckNothingWritten() const {
    const char* flag = !o_.output.empty()               ? "-o"
                       : o_.force                       ? "--force"
                       : o_.json.on                     ? "--json"
                       : o_.quiet                       ? "--quiet"
                       : o_.fail_on_nonfinite           ? "--fail-on-nonfinite"
                       : o_.capture.check_observer      ? "--check-observer"
                       : o_.capture.mark_fused_tensors  ? "--capture-fused"
                       : !o_.samples.inputs_dir.empty() ? "--inputs"
                       : o_.samples.count > 0           ? "--samples"
                       : o_.float64                     ? "--precision float64"
                                                        : nullptr;
    if (flag == nullptr) return Status::Ok();
    return InvalidArgument(std::string(flag) +
                           " writes a dump: give -o (in memory, the tensors are returned and "
                           "nothing is written)");
  }

  Expected<CapturePlan> Plan() const {
    CapturePlan plan;
    plan.model = o_.model;
    plan.selection = o_.selection;
    plan.inputs = o_.inputs.options;
    plan.capture = o_.capture;
    plan.capture.session = o_.session.session;
    OP_ASSIGN_OR_RETURN(plan.ort_library, ResolveOrtLibrary(o_.session, default_ort_library_));
    return plan;
  }

  Status Validate() override {
    if (in_memory_) return CheckNothingWritten();
    if (o_.float64 && o_.capture.check_observer)
      return InvalidArgument(
          "--check-observer compares float32 runs: not with --precision float64");
    if (o_.output.empty()) {
      o_.output = std::filesystem::path(o_.model).stem().string() + ".dump";
      o_.output_defaulted = true;
    }
    std::vector<std::string> inputs = InputFilePaths(o_.inputs);
    inputs.push_back(o_.model);
    OP_RETURN_IF_ERROR(CheckJsonOutput(o_.json, inputs, o_.force));
    if (!o_.json.file.empty() && o_.json.file == o_.output)
      return InvalidArgument("--json and -o name the same path '" + o_.output + "'");
    if (!SamplesGiven()) return CheckOutput("-o", o_.output, OutputKind::kDump, inputs, o_.force);
    if (std::filesystem::path(o_.output).extension() == ".npz") {
      return InvalidArgument("-o " + o_.output +
                             ": with --inputs or --samples the output is a folder holding one "
                             "dump per sample, not an .npz");
    }
    if (o_.capture.check_observer)
      return InvalidArgument("--check-observer checks one run: give it without --inputs/--samples");

    inputs.push_back(o_.samples.inputs_dir);
    return CheckOutput("-o", o_.output, OutputKind::kDumpSet, inputs, o_.force);
  }

  // --inputs / --samples: a folder with one dump per sample.
  Expected<CommandOutput> RunSamples(DumpRequest& req, CommandOutput out) {
    SampleOptions so = o_.samples;
    so.base = o_.inputs.options;
    auto samples = ListInputSamples(so);
    if (!samples.ok()) return NameSampleFlag(samples.status(), o_.samples);
    OP_ASSIGN_OR_RETURN(auto dumps, CaptureSamplesToDumps(req, *samples));
    {
      JsonWriter j;
      j.BeginObject().Key("schema").String("onnxprobe-run-samples");
      j.Key("output").String(o_.output).Key("samples").BeginArray();
      for (const auto& d : dumps) {
        j.BeginObject().Key("name").String(d.name).Key("dump").String(d.dump);
        j.Key("captured").UInt(d.report.capture.captured).Key("bytes").UInt(d.report.bytes_written);
        j.Key("seconds").Number(d.report.seconds).EndObject();
      }
      j.EndArray().EndObject();
      out.documents["json"] = j.str();
    }
    std::string text;
    if (!o_.quiet) {
      for (const auto& d : dumps) {
        text +=
            StringPrintf("sample %s: captured %zu tensors (%s) in %zu run%s, %.2f s -> %s\n",
                         d.name.c_str(), d.report.capture.captured,
                         FormatBytes(d.report.bytes_written).c_str(), d.report.capture.runs,
                         d.report.capture.runs == 1 ? "" : "s", d.report.seconds, d.dump.c_str());
      }
      text += StringPrintf("dump set: %s (%zu samples)\n", o_.output.c_str(), dumps.size());
    }
    OP_ASSIGN_OR_RETURN(out.text, ConsoleWithJson(o_.json, text, out.documents["json"]));
    return out;
  }

  Expected<CommandOutput> Execute(const CommandContext& context) override {
    CommandOutput out;
    if (o_.output_defaulted)
      out.Note("no -o given: writing " + o_.output + " in the current folder");
    DumpRequest req;
    req.model_path = o_.model;
    req.output = o_.output;
    req.selection = o_.selection;
    req.inputs = o_.inputs.options;
    req.capture = o_.capture;
    req.capture.session = o_.session.session;
    OP_ASSIGN_OR_RETURN(req.ort_library, ResolveOrtLibrary(o_.session));
    req.exact = o_.float64;
    if (SamplesGiven()) return RunSamples(req, std::move(out));
    if (context.progress && !o_.quiet)
      req.on_progress = [&](size_t d, size_t t) { context.progress({Phase::kCapture, d, t, ""}); };
    req.find_nonfinite = o_.fail_on_nonfinite;
    req.exact = o_.float64;
    InputPreparation prep;
    auto dump = CaptureToDump(req, &prep);
    if (!dump.ok()) return NameInputFlag(dump.status(), prep.failed);
    for (const auto& n : dump->notes) out.Note(n);
    for (const auto& n : prep.nonfinite_inputs) out.Warn(n);
    const CaptureReport* report = &dump->capture;
    const DumpMetadata& meta = dump->metadata;
    double secs = dump->seconds;
    {
      JsonWriter j;
      j.BeginObject().Key("schema").String("onnxprobe-run");
      j.Key("output").String(o_.output).Key("captured").UInt(report->captured);
      j.Key("runs").UInt(report->runs).Key("bytes").UInt(dump->bytes_written);
      j.Key("seconds").Number(secs).Key("runtime").String(meta.runtime);
      j.Key("precision").String(o_.float64 ? "float64" : "float32");
      if (dump->exact) {
        j.Key("exact_nodes").BeginArray();
        for (const auto& n : dump->exact->nodes) {
          j.BeginObject().Key("node").String(n.node).Key("op_type").String(n.op_type);
          j.Key("method").String(ExactMethodName(n.method));
          if (!n.why.empty()) j.Key("why").String(n.why);
          j.EndObject();
        }
        j.EndArray();
      }
      WriteSkipped(report->skipped, j);
      if (report->observer_checked) {
        j.Key("observer_identical").Bool(report->observer_identical);
        j.Key("observer_differences").BeginArray();
        for (const auto& d : report->observer_differences) {
          j.BeginObject().Key("name").String(d.name);
          if (d.layout_differs) j.Key("layout").String(d.layout);
          j.Key("elements").UInt(d.elements).Key("differing").UInt(d.differing);
          j.Key("max_abs").Number(d.max_abs).Key("max_rel").Number(d.max_rel).EndObject();
        }
        j.EndArray();
      }
      if (o_.fail_on_nonfinite) {
        j.Key("nonfinite_tensors").UInt(dump->nonfinite_tensors).Key("first_nonfinite");
        if (const auto& f = dump->first_nonfinite) {
          j.BeginObject().Key("name").String(f->name).Key("kind");
          j.String(f->is_input ? "input" : "tensor");
          if (!f->is_input) {
            j.Key("node").String(f->node).Key("op_type").String(f->op_type);
            j.Key("topo_index").Int(f->topo_index);
          }
          j.Key("elements").UInt(f->elements).Key("nan").UInt(f->nan_count);
          j.Key("inf").UInt(f->inf_count).EndObject();
        } else {
          j.Null();
        }
      }
      j.EndObject();
      out.documents["json"] = j.str();
    }
    std::string text;
    if (!o_.quiet) {
      text += StringPrintf("captured %zu tensors (%s) from %s in %zu run%s, %.2f s, %s %s\n",
                           report->captured, FormatBytes(dump->bytes_written).c_str(),
                           o_.model.c_str(), report->runs, report->runs == 1 ? "" : "s", secs,
                           meta.runtime.c_str(), meta.provider.c_str());
      for (const auto& s : report->skipped)
        text += StringPrintf("skipped  %s\n", s.ToString().c_str());
      if (report->observer_checked) {
        if (report->observer_identical) {
          text += StringPrintf(
              "observer check: graph outputs are bit-identical with and without capture\n");
        } else {
          text += StringPrintf("observer check: capturing CHANGED the graph outputs:\n");
          for (const auto& d : report->observer_differences) {
            if (d.layout_differs) {
              text += StringPrintf("  %s: %s\n", d.name.c_str(), d.layout.c_str());
            } else {
              text += StringPrintf(
                  "  %s: max abs difference %s, max rel %s (%llu of %llu elements differ)\n",
                  d.name.c_str(), FormatNumber(d.max_abs).c_str(), FormatNumber(d.max_rel).c_str(),
                  (unsigned long long)d.differing, (unsigned long long)d.elements);
            }
          }
        }
      }
      text += StringPrintf("dump: %s\n", o_.output.c_str());
    }
    OP_ASSIGN_OR_RETURN(out.text, ConsoleWithJson(o_.json, text, out.documents["json"]));
    if (o_.fail_on_nonfinite && dump->first_nonfinite) {
      out.notes.push_back(
          {NoteKind::kNonfinite, NonfiniteLine(*dump->first_nonfinite, dump->nonfinite_tensors)});
      out.exit_code = kExitMismatch;
    }
    if (report->observer_checked && !report->observer_identical) out.exit_code = kExitMismatch;
    return out;
  }

 private:
  RunOptions o_;
  bool in_memory_ = false;
  std::string default_ort_library_;
};

}  // namespace

std::unique_ptr<Command> MakeRunCommand() { return std::make_unique<RunCommand>(); }

Expected<CapturePlan> PlanCapture(const std::vector<std::string>& positionals,
                                  const std::vector<std::pair<std::string, std::string>>& options,
                                  std::vector<NamedTensor> tensors,
                                  const std::string& default_ort_library) {
  RunCommand command;
  command.KeepInMemory(std::move(tensors), default_ort_library);
  OP_RETURN_IF_ERROR(ApplyArguments(command, positionals, options));
  return command.Plan();
}

}  // namespace onnxprobe::cmd
