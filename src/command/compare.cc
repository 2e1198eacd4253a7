// compare A [B]: the main job.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <optional>

#include "command/commands.h"
#include "common/file_util.h"
#include "onnxprobe/capture/dump.h"
#include "onnxprobe/capture/output_guard.h"
#include "onnxprobe/command/compare_plan.h"
#include "onnxprobe/common/format.h"
#include "onnxprobe/pipeline/engine.h"
#include "onnxprobe/pipeline/options.h"
#include "onnxprobe/pipeline/sample_compare.h"
#include "onnxprobe/pipeline/sweep.h"
#include "onnxprobe/report/formats.h"
#include "onnxprobe/report/junit.h"
#include "onnxprobe/report/report.h"
#include "onnxprobe/report/sample_report.h"
#include "onnxprobe/report/sweep_report.h"

namespace onnxprobe::cmd {
namespace {

constexpr const char* kFooter =
    "A is the reference, B the side under test: each an .onnx model (run live) or a dump from\n"
    "`onnxprobe run` (folder or .npz). B defaults to A, so one model compares with itself under\n"
    "other settings. Every runtime option also exists per side as --a-NAME / --b-NAME (e.g.\n"
    "--b-opt-level all); without a prefix it applies to both sides. Examples:\n"
    "  onnxprobe compare model.onnx --b-opt-level all        optimizations off vs all\n"
    "  onnxprobe compare model.onnx --b-provider CUDA        CPU vs CUDA\n"
    "  onnxprobe compare model.onnx --b-ort-version 1.20.1   two ONNX Runtime versions\n"
    "  onnxprobe compare model.onnx edited.onnx              a model vs its modified copy\n"
    "  onnxprobe compare model.onnx saved.dump               a live run vs a saved dump";

struct CompareCli {
  std::string a, b, mapping, graph, noise_floor;
  std::map<std::string, std::string> files;  // report format (report/formats.h) -> path
  SampleOptions samples;
  std::vector<SweepAxis> sweep;
  LocalizeOptions localize;
  bool isolate = true;
  bool force = false;
  size_t bisect = 0;  // tensors per run when bisecting; 0 = full comparison
  SessionFlags shared, side_a, side_b;
  InputFlags inputs;
  ToleranceFlags tolerance;
  CompareJob job;
  ConsoleOptions console;
  bool color_forced = false;
  bool explain = false;
  bool isolate_runtime = false;
  bool fixed_tolerance = false;
  QuantOptions quant;
  int latency_runs = 0;
  bool latency_given = false;
  DiagnoseOptions diagnose;
  SampleShard shard;
  bool shard_given = false;
  bool exact = false;  // --reference exact
  ReportDetail detail = ReportDetail::kCompact;
  std::string default_ort_library;  // CompareValues
};

class CompareCommand : public Command {
 public:
  const char* name() const override { return "compare"; }
  const char* summary() const override {
    return "compare two sides tensor by tensor (models run live, or dumps) and find the node "
           "where error is introduced";
  }
  std::string footer() const override { return kFooter; }

  void Declare(OptionSink& sink) override {
    CompareCli& o = o_;
    sink.Positional("A", "reference: .onnx model (run live) or dump", &o.a, true);
    sink.Positional("B", "side under test (default: A): .onnx model or dump", &o.b, false);
    sink.Section("runtime of both sides (--a-... / --b-...: one side)");
    DeclareSessionOptions(sink, "", &o.shared);
    DeclareSessionOptions(sink, "a-", &o.side_a);
    DeclareSessionOptions(sink, "b-", &o.side_b);
    DeclareInputOptions(sink, &o.inputs);
    DeclareSampleOptions(sink, &o.samples);
    DeclareShardOption(sink, "with --inputs/--samples", &o.shard, &o.shard_given);
    DeclareToleranceOptions(sink, &o.tolerance);
    sink.Section("what to compare and how to pair");
    DeclareSelectionOptions(sink, &o.job.selection, "side A's tensors");
    DeclareString(sink, "--map", "FILE", &o.mapping,
                  "renamed tensors: JSON {\"a\": \"b\"} or two columns (A name, B name) per line");
    sink.Add({"--topk", "NAMES", "argmax/top-k agreement for these tensors (graph outputs get it)",
              true},
             [&o](const std::string& v) {
               for (auto& n : SplitList(v)) o.job.topk_tensors.push_back(n);
               return Status::Ok();
             });
    DeclareString(sink, "--model", "MODEL", &o.graph,
                  "graph used to localize errors when both sides are dumps");
    DeclareSwitch(
        sink, "--isolate-runtime", &o.isolate_runtime,
        "run live sides in child processes: a runtime that crashes (a provider, a custom op) "
        "ends the comparison with exit 3, the rows compared so far and the crashing node");
    DeclareSwitch(
        sink, "--explain-optimizations", &o.explain,
        "(one model, A optimizations off, B on) the level at which outputs change and the "
        "runtime's graph transformers that change them");
    sink.Add({"--latency-runs", "N",
              "plain runs of each live side after the comparison, in a session of its own: median "
              "latency and peak memory (default 0: not measured)"},
             [&o](const std::string& v) -> Status {
               OP_ASSIGN_OR_RETURN(int64_t n, ParseInt(v, "--latency-runs"));
               if (n < 0 || n > 10000)
                 return InvalidArgument("--latency-runs must be between 0 and 10000");
               o.latency_runs = static_cast<int>(n);
               o.latency_given = true;
               return Status::Ok();
             });
    sink.Add({"--reference", "exact",
              "also compute side A's model (else B's) exactly, in float64 on the same inputs: "
              "every row shows both sides' distance from it, and a row is allowed twice the "
              "smaller (docs/metrics.md, \"The exact reference\")"},
             [&o](const std::string& v) -> Status {
               if (v != "exact")
                 return InvalidArgument("--reference: expected exact, got '" + v + "'");
               o.exact = true;
               return Status::Ok();
             });
    DeclareString(sink, "--noise-floor", "FILE", &o.noise_floor,
                  "per-tensor run-to-run noise from determinism --save-noise-floor: differences "
                  "up to it are never failures");
    DeclareSwitch(sink, "--fixed-tolerance", &o.fixed_tolerance,
                  "accepted for older scripts: every row is judged at the given tolerance, which "
                  "no error measured upstream raises (docs/metrics.md)");
    DeclareMaxMemory(sink, &o.job.max_memory, "both sides' tensors alive at once (e.g. 1G)");
    sink.Section("float A vs quantized B (QDQ or QOperator; docs/quantization.md)");
    sink.Add({"--quant", "MODE",
              "auto (default): when A is float and B quantized, pair by structure, judge by "
              "SQNR and isolate each quantized layer; off: compare as any two models"},
             [&o](const std::string& v) -> Status {
               auto m = ParseQuantMode(v);
               if (!m.ok()) return m.status().WithContext("--quant");
               o.quant.mode = *m;
               return Status::Ok();
             });
    sink.Add({"--quant-min-sqnr", "DB",
              "a quantized tensor passes at this SQNR or above (default 20 dB)"},
             [&o](const std::string& v) -> Status {
               auto d = ParseSqnrDb(v);
               if (!d.ok()) return d.status().WithContext("--quant-min-sqnr");
               o.quant.min_sqnr_db = *d;
               return Status::Ok();
             });
    sink.Add({"--sweep", "NAME=V1,V2,...",
              "compare at each of these values of a symbolic input dimension (repeatable: every "
              "combination); a summary per shape",
              true},
             [&o](const std::string& v) -> Status {
               OP_ASSIGN_OR_RETURN(auto kv, ParseKeyValue(v, "--sweep"));
               SweepAxis axis{kv.first, {}};
               for (const auto& x : SplitList(kv.second)) {
                 OP_ASSIGN_OR_RETURN(int64_t n, ParseInt(x, "--sweep " + kv.first));
                 axis.values.push_back(n);
               }
               if (axis.values.empty())
                 return InvalidArgument("--sweep " + kv.first + ": no values");
               o.sweep.push_back(std::move(axis));
               return Status::Ok();
             });
    sink.Section("localization (side B live)");
    sink.Add({"--isolate", "WHICH",
              "run candidates alone on side B's runtime with side A's inputs: frontier "
              "(default), failing, all or none"},
             [&o](const std::string& v) -> Status {
               auto c = ParseIsolate(v);
               if (!c.ok()) return c.status().WithContext("--isolate");
               o.isolate = c->isolate;
               o.localize.candidates = c->candidates;
               return Status::Ok();
             });
    DeclareString(sink, "--repro", "DIR", &o.localize.repro_dir,
                  "write a standalone repro bundle for the top culprit");
    sink.Add({"--diagnose", "",
              "why, for every introduced culprit (default: the first 2): repeats, thread count, "
              "side A's optimization level and runtime, the models' diff, quantization ranges; "
              "each with a fix (docs/diagnose.md)"},
             [&o](const std::string&) {
               o.diagnose.max_cases = 16;
               return Status::Ok();
             });
    sink.Add({"--no-diagnose", "", "no diagnosis after localization"}, [&o](const std::string&) {
      o.diagnose.max_cases = 0;
      return Status::Ok();
    });
    sink.Add({"--knowledge", "FILE",
              "knowledge file (JSON): earlier diagnoses of the same cause on the same op type "
              "are cited, and this run's are added"},
             [&o](const std::string& v) -> Status {
               if (v.empty()) return InvalidArgument("--knowledge: empty path");
               o.diagnose.knowledge_file = v;
               return Status::Ok();
             });
    sink.Add({"--bisect", "",
              "search for the first failing tensor capturing a few tensors per run, then "
              "isolate around it"},
             [&o](const std::string&) {
               if (o.bisect == 0) o.bisect = 4;
               return Status::Ok();
             });
    sink.Add({"--bisect-per-run", "N", "tensors per run when bisecting (default 4)"},
             [&o](const std::string& v) -> Status {
               OP_ASSIGN_OR_RETURN(int64_t n, ParseInt(v, "--bisect-per-run"));
               if (n < 1 || n > 1000)
                 return InvalidArgument("--bisect-per-run must be between 1 and 1000");
               o.bisect = static_cast<size_t>(n);
               return Status::Ok();
             });
    sink.Section("reports");
    for (const ReportSink& k : CompareSinks()) {
      sink.Add({k.flag, "FILE", k.help}, [&o, &k](const std::string& v) {
        return SetReportFile(k.flag, v, &o.files[k.format]);
      });
    }
    sink.Add({"--report-detail", "LEVEL",
              "compact (default): every measurement for the tensors that fail, lead to a "
              "culprit or are graph outputs, a summary row for the rest; full: everything for "
              "every tensor (JSON and HTML)"},
             [&o](const std::string& v) -> Status {
               if (!ParseReportDetail(v, &o.detail))
                 return InvalidArgument("bad --report-detail '" + v + "' (compact or full)");
               return Status::Ok();
             });
    DeclareSwitch(sink, "--force", &o.force,
                  "replace existing files that are not onnxprobe reports of the same kind");
    DeclareSwitch(sink, "-q,--quiet", &o.console.quiet, "summary lines only");
    sink.Add({"--rows", "N", "at most N table rows (default 40)"},
             [&o](const std::string& v) -> Status {
               OP_ASSIGN_OR_RETURN(int64_t n, ParseInt(v, "--rows"));
               if (n < 1) return InvalidArgument("--rows must be at least 1");
               o.console.max_rows = static_cast<size_t>(n);
               return Status::Ok();
             });
    sink.Add({"--color", "", "color the table (default: on a terminal without NO_COLOR)"},
             [&o](const std::string&) {
               o.console.color = true;
               o.color_forced = true;
               return Status::Ok();
             });
    sink.Add({"--no-color", "", "plain table"}, [&o](const std::string&) {
      o.console.color = false;
      o.color_forced = true;
      return Status::Ok();
    });
  }

  Status Validate() override {
    CompareCli& o = o_;
    bool one_side = o.b.empty();
    if (one_side) o.b = o.a;
    if (one_side && o.side_a.touched.empty() && o.side_b.touched.empty()) {
      return InvalidArgument(
          "compare: one side given and no --a-/--b- option to tell the sides apart "
          "(e.g. --b-opt-level all)");
    }
    o.tolerance.ApplyTo(&o.job.policy);
    OP_RETURN_IF_ERROR(CheckNothingIdle());
    std::vector<std::string> inputs = InputFilePaths(o.inputs);
    for (const auto& p : {o.a, o.b, o.mapping, o.graph, o.noise_floor, o.samples.inputs_dir})
      inputs.push_back(p);
    std::vector<std::pair<std::string, std::string>> outputs = {{"--repro", o.localize.repro_dir}};
    for (const ReportSink& k : CompareSinks()) outputs.push_back({k.flag, File(k)});
    OP_RETURN_IF_ERROR(CheckDistinctOutputs(outputs));
    OP_RETURN_IF_ERROR(CheckSweep());
    for (const ReportSink& k : CompareSinks()) {
      if (File(k).empty()) continue;
      // a sweep's JSON holds every shape's comparison: a document of its own kind
      if (!o.sweep.empty()) {
        OP_RETURN_IF_ERROR(CheckOutput(k.flag, File(k), OutputKind::kSweepJson, inputs, o.force));
      } else {
        OP_RETURN_IF_ERROR(CheckOutput(k.flag, File(k), k.artifact, inputs, o.force));
      }
    }
    if (!o.localize.repro_dir.empty()) {
      OP_RETURN_IF_ERROR(
          CheckOutput("--repro", o.localize.repro_dir, OutputKind::kReproBundle, inputs, o.force));
    }
    return Status::Ok();
  }

  // A sweep writes a summary and one JSON document; per-comparison files have no single target.
  Status CheckSweep() const {
    const CompareCli& o = o_;
    if (o.sweep.empty()) return Status::Ok();
    if (!o.localize.repro_dir.empty()) {
      return InvalidArgument(
          "--repro is written for one comparison; --sweep runs one per shape (--json holds them "
          "all)");
    }
    for (const ReportSink& k : CompareSinks()) {
      if (!File(k).empty() && k.format != "json") {
        return InvalidArgument(k.flag +
                               " is written for one comparison; --sweep runs one per shape "
                               "(--json holds them all)");
      }
    }
    for (const auto& a : o.sweep) {
      if (o.inputs.options.dim_params.count(a.dim))
        return InvalidArgument("--sweep " + a.dim + " and --dim " + a.dim + " both set it");
      for (int64_t v : a.values) {
        if (v < 1) {
          return InvalidArgument("--sweep " + a.dim + ": " + std::to_string(v) +
                                 " is not a dimension (must be at least 1)");
        }
      }
    }
    if (IsDumpPath(o.a) || IsDumpPath(o.b))
      return InvalidArgument("--sweep needs both sides run live (a dump holds one shape)");
    if (SamplesGiven()) {
      return InvalidArgument(std::string(o.samples.inputs_dir.empty() ? "--samples" : "--inputs") +
                             " and --sweep: give one (each point of a sweep runs one input)");
    }
    if (!o.inputs.options.files.empty() || !o.inputs.options.tensors.empty()) {
      return InvalidArgument(
          "--sweep does nothing with --input: the files fix the shapes (use --range or --seed "
          "for the values)");
    }
    return Status::Ok();
  }

  // Options that would silently do nothing are errors.
  Status CheckNothingIdle() const {
    const CompareCli& o = o_;
    bool dump_a = IsDumpPath(o.a), dump_b = IsDumpPath(o.b);
    auto idle_side = [](const SessionFlags& f, const char* side, const std::string& path) {
      return InvalidArgument(f.given.front() + " does nothing: side " + side + " (" + path +
                             ") is a dump, not a model run live");
    };
    if (dump_a && !o.side_a.given.empty()) return idle_side(o.side_a, "A", o.a);
    if (dump_b && !o.side_b.given.empty()) return idle_side(o.side_b, "B", o.b);
    if (SamplesGiven() && (dump_a || dump_b)) {
      return InvalidArgument(std::string(o.samples.inputs_dir.empty() ? "--samples" : "--inputs") +
                             " does nothing: side " + (dump_a ? "A (" + o.a : "B (" + o.b) +
                             ") is a dump, which brings its own inputs");
    }
    if (dump_a && dump_b && !o.shared.given.empty()) {
      return InvalidArgument(o.shared.given.front() + " does nothing: both sides are dumps");
    }
    if (o.shard_given && !SamplesGiven()) {
      return InvalidArgument(
          "--shard does nothing without --inputs DIR or --samples N (it splits the samples)");
    }
    if (o.latency_given && o.latency_runs > 0 && o.isolate_runtime) {
      return InvalidArgument(
          "--latency-runs does nothing with --isolate-runtime (latency is measured in this "
          "process, which an isolated comparison keeps free of the runtime)");
    }
    if (o.latency_given && o.latency_runs > 0 && IsDumpPath(o.a) && IsDumpPath(o.b)) {
      return InvalidArgument("--latency-runs does nothing: both sides are dumps");
    }
    if (!o.localize.repro_dir.empty()) {
      if (!o.isolate) {
        return InvalidArgument(
            "--repro does nothing with --isolate none (the bundle is written for the culprit "
            "isolation finds)");
      }
      if (dump_b) {
        return InvalidArgument("--repro does nothing: side B (" + o.b +
                               ") is a dump, and a repro bundle reruns side B's runtime");
      }
    }
    return Status::Ok();
  }

  bool SamplesGiven() const { return !o_.samples.inputs_dir.empty() || o_.samples.count > 0; }

  // The file a format's flag named ("" when none).
  std::string File(const ReportSink& k) const { return File(k.format); }
  std::string File(const std::string& format) const {
    auto f = o_.files.find(format);
    return f == o_.files.end() ? "" : f->second;
  }

  // Every format asked for (every one where `documents`: Python's results carry them) rendered
  // into `out`, each file named written whole, and the console's "<label>: <path>" lines in
  // `written`. `render` gives a format's document (and what it is of, e.g. " (sample s)"), or
  // nothing where there is none to write.
  Status WriteReports(
      bool documents,
      const std::function<std::optional<std::string>(const ReportSink&, std::string*)>& render,
      CommandOutput* out, std::string* written) const {
    for (const ReportSink& k : CompareSinks()) {
      std::string file = File(k), of;
      if (!documents && file.empty()) continue;
      std::optional<std::string> text = render(k, &of);
      if (!text) continue;
      if (!file.empty()) {
        OP_RETURN_IF_ERROR(WriteOutputFile(file, *text));
        *written += k.label + ": " + file + of + "\n";
      }
      out->documents[k.format] = std::move(*text);
    }
    return Status::Ok();
  }

  // --inputs / --samples: one comparison per sample, aggregated; the console shows each sample's
  // verdict, the aggregates and the focus sample's full report.
  Expected<CommandOutput> RunSamples(const ComparePlan& plan, const CompareRequest& req,
                                     const CommandContext& context, std::string* within) {
    CompareCli& o = o_;
    OP_ASSIGN_OR_RETURN(std::vector<InputSample> samples, PlanSamples(plan));
    // the rows' progress says which sample of how many it is comparing
    OP_ASSIGN_OR_RETURN(
        SamplesCompareReport r,
        CompareSamples(req, samples, o.shard,
                       [this, within, &context](size_t done, size_t total, const std::string&) {
                         if (done < total) {
                           *within =
                               "sample " + std::to_string(done + 1) + "/" + std::to_string(total);
                         }
                         bool show = context.progress && !o_.console.quiet;
                         return !show || context.progress({Phase::kSample, done, total, ""});
                       }));
    const SampleCompare* focus = FocusSample(r);
    if (focus != nullptr && focus->report.comparison.aborted &&
        focus->report.comparison.rows.empty() && r.samples.size() == 1) {
      return focus->report.comparison.abort_status;
    }
    CommandOutput out;
    RenderContext rc{o.detail, o.b, {}, 0};
    std::string written;  // the console's lines naming the files
    OP_RETURN_IF_ERROR(WriteReports(
        context.documents,
        [&](const ReportSink& k, std::string* of) -> std::optional<std::string> {
          if (k.render_samples) return k.render_samples(r, rc);
          if (focus == nullptr) return std::nullopt;
          *of = " (sample " + focus->name + ")";
          return k.render(focus->report, rc);
        },
        &out, &written));
    std::string& text = out.text;
    if (focus != nullptr) {
      for (const auto& n : focus->report.notes) out.Note(n);
      text += "sample " + focus->name + " (" +
              (focus->report.passed() ? "closest to its tolerance" : "first failing") + "):\n";
      text += MakeConsoleReporter(o.console)->Render(focus->report);
    }
    text += RenderSamplesConsole(r);
    if (r.shard.sharded()) {
      text += StringPrintf(
          "shard %zu/%zu: %zu of %zu samples (onnxprobe merge joins the shards' --json)\n",
          r.shard.index, r.shard.count, r.samples.size(), r.total_samples);
    }
    text += written;
    if (r.aborted) out.error = r.abort_status;
    out.exit_code = r.passed() ? kExitOk : kExitMismatch;
    return out;
  }

  // What Python holds as values (arrays, a dict of names), set before the options are applied
  // so that Validate() sees them as their flags' files.
  void SetValues(CompareValues values) {
    o_.inputs.options.tensors = std::move(values.tensors);
    o_.job.rename = std::move(values.rename);
    o_.default_ort_library = std::move(values.default_ort_library);
  }

  // The typed request of the options applied (after Validate()).
  Expected<ComparePlan> Plan() const {
    const CompareCli& o = o_;
    ComparePlan plan;
    CompareRequest& req = plan.request;
    SessionFlags fa = MergeSessionFlags(o.shared, o.side_a);
    SessionFlags fb = MergeSessionFlags(o.shared, o.side_b);
    // a provider named without a runtime that has it: the installed runtime that does
    OP_ASSIGN_OR_RETURN(std::string picked,
                        PickRuntimeForProviders({&fa, &fb}, o.default_ort_library));
    if (!picked.empty()) req.notes.push_back(picked);
    auto side = [&](const std::string& path, const SessionFlags& f,
                    const SessionFlags& own) -> Expected<SideRequest> {
      OP_ASSIGN_OR_RETURN(std::string lib, ResolveOrtLibrary(f, o.default_ort_library));
      // shared options reach a dump side only when both are dumps, refused in Validate()
      return SideRequest{path, f.session, !own.given.empty(), lib};
    };
    OP_ASSIGN_OR_RETURN(req.a, side(o.a, fa, o.side_a));
    OP_ASSIGN_OR_RETURN(req.b, side(o.b, fb, o.side_b));
    req.inputs = o.inputs.options;
    req.inputs_given = !o.inputs.given.empty() || !o.inputs.options.tensors.empty();
    req.job = o.job;
    req.mapping_file = o.mapping;
    req.graph_model = o.graph;
    req.noise_floor_file = o.noise_floor;
    req.explain_optimizations = o.explain;
    req.isolate_runtime = o.isolate_runtime;
    req.exact_reference = o.exact;
    req.latency_runs = o.isolate_runtime ? 0 : o.latency_runs;
    if (o.latency_given) req.latency_max_ms = 0;  // a number given is run in full
    req.bisect_per_run = o.bisect;
    req.localize = o.isolate;
    req.localize_options = o.localize;
    req.quant = o.quant;
    req.quant.isolate = o.isolate;
    req.diagnose = o.diagnose;
    if (!o.isolate) req.diagnose.max_cases = 0;
    plan.samples = o.samples;
    plan.samples.base = o.inputs.options;
    plan.shard = o.shard;
    plan.sweep = o.sweep;
    return plan;
  }

  Expected<CommandOutput> Execute(const CommandContext& context) override {
    CompareCli& o = o_;
    if (!o.color_forced) o.console.color = context.color;
    OP_ASSIGN_OR_RETURN(ComparePlan plan, Plan());
    CompareRequest& req = plan.request;
    if (!o.sweep.empty()) return RunSweep(req, context);
    bool show = context.progress && !o.console.quiet;
    auto started = std::chrono::steady_clock::now();
    const auto t0 = started;
    std::map<std::string, double> row_seconds;  // for JUnit: time since the previous row
    std::string within;                         // over samples: which sample the rows are of
    req.on_row = [&](const TensorResult& row, size_t d, size_t t) {
      auto now = std::chrono::steady_clock::now();
      row_seconds[row.name] = std::chrono::duration<double>(now - started).count();
      started = now;
      if (show) context.progress({Phase::kCompare, d, t, within});
    };
    // isolation can take longer than the comparison: say that it is going on
    if (show) {
      req.localize_options.on_run = [&context, &within](size_t runs) {
        context.progress({Phase::kIsolate, runs, 0, within});
      };
    }
    if (SamplesGiven()) return RunSamples(plan, req, context, &within);
    OP_ASSIGN_OR_RETURN(CompareReport result, Compare(req));
    CommandOutput out;
    for (const auto& n : result.notes) out.Note(n);
    const ComparisonResult& r = result.comparison;
    // nothing compared (e.g. a provider this runtime lacks): the notes and the error, no empty
    // report
    if (r.aborted && r.rows.empty()) {
      out.error = r.abort_status;
      return out;
    }
    // reports first: rows compared before a failure must reach the files
    RenderContext rc{o.detail, o.b, row_seconds,
                     std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()};
    std::string written;
    OP_RETURN_IF_ERROR(WriteReports(
        context.documents,
        [&](const ReportSink& k, std::string*) -> std::optional<std::string> {
          return k.render(result, rc);
        },
        &out, &written));
    out.text = MakeConsoleReporter(o.console)->Render(result) + written;
    out.exit_code = r.failures > 0 || !r.unpaired_outputs.empty() || !r.nan_outputs.empty()
                        ? kExitMismatch
                        : kExitOk;
    if (r.aborted) {
      out.error = r.abort_status;
    } else if (!result.localization.repro_status.ok()) {
      // a bundle asked for and not written is a failed write (exit 2), after the report it
      // explains
      out.error = result.localization.repro_status.WithContext("--repro");
    }
    return out;
  }

  // The comparison at each shape: each shape's console report, then one line per shape.
  Expected<CommandOutput> RunSweep(CompareRequest req, const CommandContext& context) {
    CompareCli& o = o_;
    SweepRequest sweep{std::move(req), o.sweep};
    OP_ASSIGN_OR_RETURN(SweepReport result, CompareSweep(sweep));
    CommandOutput out;
    bool backend_failed = false;
    for (const SweepPoint& p : result.points) {
      out.text += "== " + SweepPointLabel(p) + " ==\n";
      const ComparisonResult& r = p.report.comparison;
      if (!p.error.ok() || (r.aborted && r.rows.empty())) {
        backend_failed = true;
        out.text +=
            "runtime failed: " + (p.error.ok() ? r.abort_status : p.error).message() + "\n\n";
        continue;
      }
      for (const auto& n : p.report.notes) out.Note(n);
      out.text += MakeConsoleReporter(o.console)->Render(p.report);
      backend_failed |= r.aborted;
      out.text += "\n";
    }
    out.text += RenderSweepText(result);
    const std::string json = File("json");
    if (context.documents || !json.empty()) out.documents["json"] = RenderSweepJson(result);
    if (!json.empty()) {
      out.error = WriteJsonOutput(json, out.documents["json"]);  // the shapes' reports first
      if (!out.error.ok()) return out;
      out.text += "JSON report: " + json + "\n";
    }
    out.exit_code = backend_failed ? kExitRuntime : result.passed() ? kExitOk : kExitMismatch;
    return out;
  }

 private:
  CompareCli o_;
};

}  // namespace

std::unique_ptr<Command> MakeCompareCommand() { return std::make_unique<CompareCommand>(); }

Expected<std::vector<InputSample>> PlanSamples(const ComparePlan& plan) {
  auto samples = ListInputSamples(plan.samples);
  if (!samples.ok()) return NameSampleFlag(samples.status(), plan.samples);
  return samples;
}

Expected<ComparePlan> PlanCompare(const std::vector<std::string>& positionals,
                                  const std::vector<std::pair<std::string, std::string>>& options,
                                  CompareValues values) {
  CompareCommand command;
  command.SetValues(std::move(values));
  OP_RETURN_IF_ERROR(ApplyArguments(command, positionals, options));
  return command.Plan();
}

}  // namespace onnxprobe::cmd
