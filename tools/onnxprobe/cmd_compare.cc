// onnxprobe compare A [B]: the main job.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "cli.h"
#include "onnxprobe/engine.h"
#include "onnxprobe/report.h"

namespace onnxprobe::cli {
namespace {

constexpr const char* kHelp =
    "usage: onnxprobe compare A [B] [options]\n"
    "A is the reference, B the side under test: each an .onnx model (run live) or a dump from\n"
    "`onnxprobe run` (folder or .npz). B defaults to A, so one model compares with itself under\n"
    "other settings. Examples:\n"
    "  onnxprobe compare model.onnx --b-opt-level all        optimizations off vs all\n"
    "  onnxprobe compare model.onnx --b-provider CUDA        CPU vs CUDA\n"
    "  onnxprobe compare model.onnx --b-ort-version 1.20.1   two ONNX Runtime versions, one "
    "process\n"
    "  onnxprobe compare model.onnx edited.onnx              a model vs its modified copy\n"
    "  onnxprobe compare model.onnx saved.dump               a live run vs a saved dump\n"
    "sides (no prefix: both sides; --a-... / --b-...: one side)\n"
    "  --provider NAME, --provider-option K=V, --opt-level L, --intra-threads N, --inter-threads "
    "N,\n"
    "  --parallel, --ort-lib PATH, --ort-version X.Y.Z\n"
    "inputs (shared by both sides; a dump side brings its own)\n"
    "  --input FILE, --shape NAME:DIMS, --dim NAME=N, --range [NAME:]LO,HI, --seed N\n"
    "tolerances (docs/metrics.md)\n"
    "  --atol X (default 1e-5, per unit of the tensor's scale: atol * max(1, max|a|)), --rtol X\n"
    "  (default 1e-3); --absolute-atol applies atol as given\n"
    "  --tol REGEX=ATOL,RTOL     override for tensors whose name matches (repeatable)\n"
    "  --op-tol OP=ATOL,RTOL     override for outputs of an op type (repeatable)\n"
    "  --judge MODE              elementwise (default), max, mean or p99\n"
    "  --rel-eps X               relative error is |b-a|/(|a|+X) (default: X = 1e-3 * max|a|)\n"
    "what to compare and how to pair\n"
    "  --tensors A,B  --op-types Conv,Gemm  --regex RE   restrict side A's tensors\n"
    "  --map FILE                renamed tensors: JSON {\"a\": \"b\"} or two columns per line\n"
    "  --topk NAMES              argmax/top-k agreement for these tensors (graph outputs get it)\n"
    "  --model MODEL             graph used to localize errors when both sides are dumps\n"
    "  --explain-optimizations   (one model, A optimizations off, B on) the level at which "
    "outputs\n"
    "                            change and the runtime's graph transformers that change them\n"
    "  --noise-floor FILE        per-tensor run-to-run noise from determinism --save-noise-floor:\n"
    "                            differences up to it are never failures\n"
    "  --max-memory SIZE         both sides' tensors alive at once (e.g. 1G)\n"
    "localization (side B live)\n"
    "  --isolate WHICH           run candidates alone on side B's runtime with side A's inputs:\n"
    "                            frontier (default), failing, all, or none\n"
    "  --repro DIR               write a standalone repro bundle for the top culprit\n"
    "  --bisect                  search for the first failing tensor capturing a few tensors per\n"
    "                            run (--bisect-per-run N, default 4), then isolate around it\n"
    "reports\n"
    "  --json FILE  --html FILE  -q/--quiet  --rows N  --color/--no-color\n";

struct CompareCli {
  std::string a, b, json, html, mapping, graph, noise_floor;
  LocalizeOptions localize;
  bool isolate = true;
  size_t bisect = 0;  // tensors per run when bisecting; 0 = full comparison
  SessionFlags shared, side_a, side_b;
  InputOptions inputs;
  CompareJob job;
  ConsoleOptions console;
  bool color_forced = false;
  bool absolute_atol = false;
  bool explain = false;
};

Expected<Tolerance> ParseTol(const std::string& s, const std::string& what) {
  auto comma = s.find(',');
  if (comma == std::string::npos)
    return InvalidArgument("bad " + what + " '" + s + "' (expected ATOL,RTOL)");
  char* e1 = nullptr;
  char* e2 = nullptr;
  std::string x = s.substr(0, comma), y = s.substr(comma + 1);
  Tolerance t{std::strtod(x.c_str(), &e1), std::strtod(y.c_str(), &e2), true};
  if (x.empty() || y.empty() || *e1 || *e2 || !(t.atol >= 0) || !(t.rtol >= 0)) {
    return InvalidArgument("bad " + what + " '" + s + "' (expected ATOL,RTOL, both >= 0)");
  }
  return t;
}

Expected<double> ParseNonNegative(const std::string& s, const std::string& what) {
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (s.empty() || *end || !(v >= 0))
    return InvalidArgument("bad " + what + " '" + s + "' (expected a number >= 0)");
  return v;
}

Status Parse(Args& args, CompareCli* o, bool* help) {
  Status st;
  std::vector<std::string> positional;
  while (!args.Done()) {
    if (args.Flag("--help") || args.Flag("-h")) {
      *help = true;
      return Status::Ok();
    }
    if (ParseInputFlag(args, &o->inputs, &st) || ParseSessionFlag(args, "--a-", &o->side_a, &st) ||
        ParseSessionFlag(args, "--b-", &o->side_b, &st) ||
        ParseSessionFlag(args, "", &o->shared, &st)) {
      OP_RETURN_IF_ERROR(st);
    } else if (args.Flag("--atol")) {
      OP_ASSIGN_OR_RETURN(std::string v, args.Value());
      OP_ASSIGN_OR_RETURN(o->job.policy.global.atol, ParseNonNegative(v, "--atol"));
    } else if (args.Flag("--rtol")) {
      OP_ASSIGN_OR_RETURN(std::string v, args.Value());
      OP_ASSIGN_OR_RETURN(o->job.policy.global.rtol, ParseNonNegative(v, "--rtol"));
    } else if (args.Flag("--absolute-atol")) {
      o->absolute_atol = true;
    } else if (args.Flag("--rel-eps")) {
      OP_ASSIGN_OR_RETURN(std::string v, args.Value());
      OP_ASSIGN_OR_RETURN(o->job.policy.rel_eps, ParseNonNegative(v, "--rel-eps"));
    } else if (bool by_op = false; args.Flag("--tol") || (by_op = args.Flag("--op-tol"))) {
      OP_ASSIGN_OR_RETURN(std::string v, args.Value());
      auto eq = v.rfind('=');
      if (eq == std::string::npos || eq == 0)
        return InvalidArgument("bad tolerance override '" + v + "' (expected PATTERN=ATOL,RTOL)");
      OP_ASSIGN_OR_RETURN(Tolerance t, ParseTol(v.substr(eq + 1), "tolerance override"));
      o->job.policy.rules.push_back({v.substr(0, eq), by_op, t});
    } else if (args.Flag("--judge")) {
      OP_ASSIGN_OR_RETURN(std::string v, args.Value());
      if (v == "elementwise")
        o->job.policy.judge = JudgeBy::kElementwise;
      else if (v == "max")
        o->job.policy.judge = JudgeBy::kMax;
      else if (v == "mean")
        o->job.policy.judge = JudgeBy::kMean;
      else if (v == "p99")
        o->job.policy.judge = JudgeBy::kP99;
      else
        return InvalidArgument("bad --judge '" + v + "' (elementwise, max, mean or p99)");
    } else if (args.Flag("--tensors")) {
      OP_ASSIGN_OR_RETURN(std::string v, args.Value());
      for (auto& n : SplitList(v)) o->job.selection.names.push_back(n);
    } else if (args.Flag("--op-types")) {
      OP_ASSIGN_OR_RETURN(std::string v, args.Value());
      for (auto& n : SplitList(v)) o->job.selection.op_types.push_back(n);
    } else if (args.Flag("--regex")) {
      OP_ASSIGN_OR_RETURN(o->job.selection.regex, args.Value());
    } else if (args.Flag("--map")) {
      OP_ASSIGN_OR_RETURN(o->mapping, args.Value());
    } else if (args.Flag("--topk")) {
      OP_ASSIGN_OR_RETURN(std::string v, args.Value());
      for (auto& n : SplitList(v)) o->job.topk_tensors.push_back(n);
    } else if (args.Flag("--explain-optimizations")) {
      o->explain = true;
    } else if (args.Flag("--noise-floor")) {
      OP_ASSIGN_OR_RETURN(o->noise_floor, args.Value());
    } else if (args.Flag("--model")) {
      OP_ASSIGN_OR_RETURN(o->graph, args.Value());
    } else if (args.Flag("--max-memory")) {
      OP_ASSIGN_OR_RETURN(std::string v, args.Value());
      OP_ASSIGN_OR_RETURN(o->job.max_memory, ParseBytes(v));
    } else if (args.Flag("--isolate")) {
      OP_ASSIGN_OR_RETURN(std::string v, args.Value());
      o->isolate = v != "none";
      if (v == "frontier")
        o->localize.candidates = Candidates::kFrontier;
      else if (v == "failing")
        o->localize.candidates = Candidates::kFailing;
      else if (v == "all")
        o->localize.candidates = Candidates::kAll;
      else if (v != "none")
        return InvalidArgument("bad --isolate '" + v + "' (frontier, failing, all or none)");
    } else if (args.Flag("--bisect")) {
      o->bisect = 4;
    } else if (args.Flag("--bisect-per-run")) {
      OP_ASSIGN_OR_RETURN(std::string v, args.Value());
      OP_ASSIGN_OR_RETURN(int64_t n, ParseInt(v, "--bisect-per-run"));
      if (n < 1 || n > 1000) return InvalidArgument("--bisect-per-run must be between 1 and 1000");
      o->bisect = static_cast<size_t>(n);
    } else if (args.Flag("--repro")) {
      OP_ASSIGN_OR_RETURN(o->localize.repro_dir, args.Value());
    } else if (args.Flag("--json")) {
      OP_ASSIGN_OR_RETURN(o->json, args.Value());
    } else if (args.Flag("--html")) {
      OP_ASSIGN_OR_RETURN(o->html, args.Value());
    } else if (args.Flag("-q") || args.Flag("--quiet")) {
      o->console.quiet = true;
    } else if (args.Flag("--rows")) {
      OP_ASSIGN_OR_RETURN(std::string v, args.Value());
      OP_ASSIGN_OR_RETURN(int64_t n, ParseInt(v, "--rows"));
      if (n < 1) return InvalidArgument("--rows must be at least 1");
      o->console.max_rows = static_cast<size_t>(n);
    } else if (args.Flag("--color")) {
      o->console.color = true;
      o->color_forced = true;
    } else if (args.Flag("--no-color")) {
      o->console.color = false;
      o->color_forced = true;
    } else if (!args.Peek().empty() && args.Peek()[0] == '-') {
      return InvalidArgument("compare: unknown option '" + args.Peek() +
                             "' (see onnxprobe compare --help)");
    } else {
      positional.push_back(args.Next());
    }
  }
  if (o->absolute_atol) {
    o->job.policy.global.scale_atol = false;
    for (auto& r : o->job.policy.rules) r.tolerance.scale_atol = false;
  }
  if (positional.empty())
    return InvalidArgument("compare: no side given (usage: onnxprobe compare A [B])");
  if (positional.size() > 2) return InvalidArgument("compare: more than two sides given");
  o->a = positional[0];
  o->b = positional.size() == 2 ? positional[1] : positional[0];
  if (positional.size() == 1 && o->side_a.touched.empty() && o->side_b.touched.empty()) {
    return InvalidArgument(
        "compare: one side given and no --a-/--b- option to tell the sides apart "
        "(e.g. --b-opt-level all)");
  }
  return Status::Ok();
}

}  // namespace

int RunCompare(Args& args) {
  CompareCli o;
  bool help = false;
  Status st = Parse(args, &o, &help);
  if (!st.ok()) return Fail(st);
  if (help) {
    std::fputs(kHelp, stdout);
    return kExitOk;
  }
  if (!o.color_forced)
    o.console.color = isatty(STDOUT_FILENO) && std::getenv("NO_COLOR") == nullptr;
  CompareRequest req;
  auto side = [&](const std::string& path, const SessionFlags& own) -> Expected<SideRequest> {
    SessionFlags f = MergeSessionFlags(o.shared, own);
    OP_ASSIGN_OR_RETURN(std::string lib, ResolveOrtLibrary(f));
    return SideRequest{path, f.session, !f.touched.empty(), lib};
  };
  auto sa = side(o.a, o.side_a);
  if (!sa.ok()) return Fail(sa.status());
  auto sb = side(o.b, o.side_b);
  if (!sb.ok()) return Fail(sb.status());
  req.a = *sa;
  req.b = *sb;
  req.inputs = o.inputs;
  req.job = o.job;
  req.mapping_file = o.mapping;
  req.graph_model = o.graph;
  req.noise_floor_file = o.noise_floor;
  req.explain_optimizations = o.explain;
  req.bisect_per_run = o.bisect;
  req.localize = o.isolate;
  req.localize_options = o.localize;
  ProgressLine progress(!o.console.quiet && isatty(STDERR_FILENO), "comparing");
  req.on_row = [&](const TensorResult&, size_t d, size_t t) { progress.Update(d, t); };
  auto result = Compare(req);
  progress.Update(1, 1);
  if (!result.ok()) return Fail(result.status());
  // reports first: rows compared before a failure must reach the files
  if (!o.json.empty()) {
    st = WriteReport(*MakeJsonReporter(), *result, o.json);
    if (!st.ok()) return Fail(st);
  }
  if (!o.html.empty()) {
    st = WriteReport(*MakeHtmlReporter(), *result, o.html);
    if (!st.ok()) return Fail(st);
  }
  std::fputs(MakeConsoleReporter(o.console)->Render(*result).c_str(), stdout);
  if (!o.json.empty()) std::printf("JSON report: %s\n", o.json.c_str());
  if (!o.html.empty()) std::printf("HTML report: %s\n", o.html.c_str());
  for (const auto& n : result->notes) std::fprintf(stderr, "onnxprobe: note: %s\n", n.c_str());
  if (result->comparison.aborted) {
    std::fflush(stdout);
    return Fail(result->comparison.abort_status);
  }
  return result->comparison.failures > 0 ? kExitMismatch : kExitOk;
}

}  // namespace onnxprobe::cli
