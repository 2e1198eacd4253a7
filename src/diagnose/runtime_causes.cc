// Causes in the runtime, each confirmed by running the culprit's nodes alone with side A's
// exact inputs: non-determinism (repeats, thread count), the optimizer (side A's level, then
// the transformer search), a kernel change (side A's runtime or provider).
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "diagnose/causes.h"
#include "onnxprobe/backend/platform.h"
#include "onnxprobe/common/format.h"
#include "onnxprobe/localize/explain.h"

namespace onnxprobe::diagnose {
namespace {

constexpr const char* kDisableKey = "optimization.disable_specified_optimizers";

Finding Base(const Culprit1& c, Cause cause) {
  Finding f;
  f.node = c.data.node;
  f.tensor = c.data.tensor;
  f.op_type = c.culprit != nullptr ? c.culprit->op_type : "";
  f.cause = cause;
  return f;
}

std::string Num(double x) { return FormatNumber(x); }

std::string Join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

// A tolerance that holds twice the error measured on the node alone, rounded up to one
// significant digit: what accepting the difference as the new rounding takes.
std::string AcceptingOpTol(const Ctx& cx, const Culprit1& c) {
  Tolerance t = cx.in.comparison->policy.For(c.data.tensor, c.culprit ? c.culprit->op_type : "");
  double scale = 1;
  if (t.scale_atol && !c.data.expected.empty()) {
    TensorStats s = ComputeStats(c.data.expected);
    scale = std::max({1.0, std::fabs(s.min), std::fabs(s.max)});
  }
  double need = 2 * c.error / scale;
  if (!(need > 0) || !std::isfinite(need)) return "";  // no finite error to accept
  double p = std::pow(10.0, std::floor(std::log10(need)));
  double atol = std::ceil(need / p) * p;
  char buf[64];
  std::snprintf(buf, sizeof buf, "=%.0e,%g", atol, t.rtol);
  return (c.culprit ? c.culprit->op_type : std::string("?")) + buf;
}

// Run-to-run repeats on side B's settings, then side A's thread count.
bool Repeats(Ctx& cx, CaseRunner& run, const Culprit1& c, std::vector<Finding>* found,
             std::string* tried) {
  const DiagnoseSide& b = cx.in.b;
  int n = std::max(2, cx.options.repeats);
  auto outs = run.Run(b.ort_library, b.session, n);
  if (!outs.ok()) {
    Tried(tried, "repeats on side B's settings failed: " + outs.status().message());
    return false;
  }
  double spread = MaxAbsDiff(c.data.observed, (*outs)[0]);
  for (size_t k = 1; k < outs->size(); ++k)
    spread = std::max(spread, MaxAbsDiff((*outs)[0], (*outs)[k]));
  if (spread > 0) {
    Finding f = Base(c, Cause::kNondeterminism);
    // noise at a quarter of the error or more accounts for it (two independent draws differ by
    // up to twice one draw's size); below that it is present but not shown to be the cause
    f.certainty = spread >= c.error / 4 ? Certainty::kConfirmed : Certainty::kLikely;
    f.summary =
        "the node gives other values from one run to the next with identical inputs "
        "(a non-deterministic kernel, or randomness in a custom operator)";
    f.evidence = std::to_string(n + 1) +
                 " runs of the node alone on side B's settings with side A's "
                 "inputs differ from each other by up to " +
                 Num(spread) + "; its error against side A: " + Num(c.error);
    std::vector<std::string> cmd = {"onnxprobe", "determinism", b.path};
    for (const auto& x : RuntimeFlags(b)) cmd.push_back(x);
    // ten runs: the floor is the largest difference among them, near the noise's full span
    cmd.insert(cmd.end(), {"--runs", "10", "--save-noise-floor", "noise-floor.json"});
    f.fix.summary =
        "measure side B's run-to-run noise (with the comparison's input flags) and let "
        "the comparison allow it; or make the kernel deterministic (a fixed seed, "
        "deterministic compute)";
    f.fix.command = ShellJoin(cmd);
    f.fix.compare_flags = {"--noise-floor", "noise-floor.json"};
    found->push_back(std::move(f));
    return true;
  }
  Tried(tried, std::to_string(n + 1) + " runs on side B's settings are bit-identical");
  const SessionOptions& as = cx.in.a.session;
  if (cx.in.a.model == nullptr || as.intra_op_threads == b.session.intra_op_threads) return false;
  SessionOptions o = b.session;
  o.intra_op_threads = as.intra_op_threads;
  auto got = run.Run(b.ort_library, o);
  if (!got.ok() || !(*got)[0].BitwiseEqual(c.data.expected)) {
    Tried(tried, "side A's thread count does not give side A's values");
    return false;
  }
  Finding f = Base(c, Cause::kThreadCount);
  f.certainty = Certainty::kConfirmed;
  f.summary = "the node's result depends on the number of threads it runs on";
  f.evidence = "the node alone on side B's runtime with side A's thread count (" +
               std::to_string(as.intra_op_threads) +
               ") gives side A's values exactly; with side B's (" +
               std::to_string(b.session.intra_op_threads) + ") it differs by " + Num(c.error);
  f.fix.summary = "run both sides with the same intra-op thread count";
  f.fix.compare_flags = {"--b-intra-threads", std::to_string(as.intra_op_threads)};
  found->push_back(std::move(f));
  return true;
}

// Side B at side A's optimization level; then which transformer, and the fix checked.
void Optimizer(Ctx& cx, CaseRunner& run, const Culprit1& c, std::vector<Finding>* found,
               std::string* tried) {
  const DiagnoseSide &a = cx.in.a, &b = cx.in.b;
  OptLevel la = a.session.optimization_level, lb = b.session.optimization_level;
  if (a.model == nullptr || la == lb) return;
  const TolerancePolicy& policy = cx.in.comparison->policy;
  std::string op = c.culprit != nullptr ? c.culprit->op_type : "";
  SessionOptions o = b.session;
  o.optimization_level = la;
  auto got = run.Run(b.ort_library, o);
  if (!got.ok()) {
    Tried(tried, "side A's optimization level failed: " + got.status().message());
    return;
  }
  double d = MaxAbsDiff(c.data.expected, (*got)[0]);
  if (!WithinTolerance(c.data.expected, (*got)[0], policy, c.data.tensor, op)) {
    Tried(tried, "at side A's optimization level (" + OptLevelName(la) + ") it still differs by " +
                     Num(d));
    return;
  }
  Finding f = Base(c, Cause::kOptimizer);
  f.certainty = Certainty::kConfirmed;
  f.evidence = "the node alone on side B's runtime: at level " + OptLevelName(lb) + " max abs " +
               Num(c.error) + " against side A, at side A's level (" + OptLevelName(la) + ") " +
               Num(d);
  // the ladder between the two levels: the first level at which the node leaves tolerance
  for (OptLevel level : kOptLevels) {
    if (level <= std::min(la, lb) || level >= std::max(la, lb)) continue;
    SessionOptions lo = b.session;
    lo.optimization_level = level;
    auto at = run.Run(b.ort_library, lo);
    if (!at.ok()) break;
    if (!WithinTolerance(c.data.expected, (*at)[0], policy, c.data.tensor, op)) {
      f.evidence += "; it first leaves tolerance at level " + OptLevelName(level) + " (max abs " +
                    Num(MaxAbsDiff(c.data.expected, (*at)[0])) + ")";
      break;
    }
  }
  std::vector<std::string> names;
  auto backend = LoadBackend(b.ort_library);
  if (backend.ok()) {
    auto search = FindChangingTransformers(**backend, c.data.model_bytes, c.data.model_dir,
                                           run.Feed(), {c.data.output}, b.session, &cx.runs);
    if (search.ok()) names = *search;
  }
  if (!names.empty()) {
    SessionOptions fixed = b.session;
    std::string list = Join(names, ";");
    auto& entry = fixed.config_entries[kDisableKey];
    entry = entry.empty() ? list : entry + ";" + list;
    auto v = run.Run(b.ort_library, fixed);
    if (v.ok() && WithinTolerance(c.data.expected, (*v)[0], policy, c.data.tensor, op)) {
      f.evidence += "; with " + Join(names, ", ") + " disabled, level " + OptLevelName(lb) +
                    " gives " + Num(MaxAbsDiff(c.data.expected, (*v)[0]));
      f.fix.summary = "disable " + Join(names, ", ") +
                      " on side B (ONNX Runtime session "
                      "configuration " +
                      kDisableKey + "); the other optimizations stay on";
      f.fix.compare_flags = {"--b-session-config", std::string(kDisableKey) + "=" + entry};
    }
  }
  f.summary = names.empty() ? "ONNX Runtime's graph optimizations at level " + OptLevelName(lb) +
                                  " change this node's result"
                            : "ONNX Runtime's rewrite " + Join(names, ", ") + " (level " +
                                  OptLevelName(lb) + ") changes this node's result";
  if (f.fix.compare_flags.empty()) {
    f.fix.summary = "run side B at side A's optimization level";
    f.fix.compare_flags = {"--b-opt-level", OptLevelName(la)};
  }
  found->push_back(std::move(f));
}

std::string ResolvedLibrary(const std::string& library) {
  auto backend = LoadBackend(library);
  return backend.ok() ? (*backend)->library_path() : library;
}

// Side A's runtime (another version or provider) on the same isolated nodes and inputs.
void KernelChange(Ctx& cx, CaseRunner& run, const Culprit1& c, std::vector<Finding>* found,
                  std::string* tried) {
  const DiagnoseSide &a = cx.in.a, &b = cx.in.b;
  if (a.model == nullptr) return;
  std::string lib_a = ResolvedLibrary(a.ort_library), lib_b = ResolvedLibrary(b.ort_library);
  bool other_runtime = lib_a != lib_b;
  bool other_provider = a.session.provider != b.session.provider;
  // the sides on two CPUs (backend/platform.h): the same runtime's kernels differ per CPU
  auto platform = [](const std::string& library) {
    auto backend = LoadBackend(library);
    return backend.ok() ? (*backend)->platform() : std::string();
  };
  std::string platform_a = platform(a.ort_library), platform_b = platform(b.ort_library);
  bool other_cpu = platform_a != platform_b;
  if (!other_runtime && !other_provider && !other_cpu) return;
  std::string op = c.culprit != nullptr ? c.culprit->op_type : "";
  auto on = [](const std::string& p) { return " on " + (p.empty() ? "this machine" : p); };
  std::string name_a =
      RuntimeName(a.ort_library) + " " + a.session.provider + (other_cpu ? on(platform_a) : "");
  std::string name_b =
      RuntimeName(b.ort_library) + " " + b.session.provider + (other_cpu ? on(platform_b) : "");
  SessionOptions o = a.session;
  o.optimization_level = b.session.optimization_level;  // one change at a time: the runtime
  auto got = run.Run(a.ort_library, o);
  if (!got.ok()) {
    Tried(tried, "side A's runtime could not run the node alone: " + got.status().message());
    return;
  }
  double d = MaxAbsDiff(c.data.expected, (*got)[0]);
  bool within =
      WithinTolerance(c.data.expected, (*got)[0], cx.in.comparison->policy, c.data.tensor, op);
  if (!(d == 0 || (within && d <= c.error / 4))) {
    Tried(tried,
          "side A's runtime (" + name_a + ") also differs from side A's values by " + Num(d));
    return;
  }
  Finding f = Base(c, Cause::kKernelChange);
  f.certainty = d == 0 ? Certainty::kConfirmed : Certainty::kLikely;
  f.summary = "the " + (op.empty() ? std::string("node's") : op) + " kernels of " + name_a +
              " and " + name_b + " compute this node differently";
  f.evidence = "the node alone with side A's inputs: " + name_a + " gives side A's values " +
               (d == 0 ? std::string("exactly") : "within tolerance (max abs " + Num(d) + ")") +
               ", " + name_b + " differs by " + Num(c.error);
  std::string tol = AcceptingOpTol(cx, c);
  std::string accept =
      tol.empty() ? ""
                  : ", or accept the new kernel's rounding where it is made (--op-tol " + tol +
                        ", twice the error measured here; the tensors computed from it keep "
                        "their own tolerances)";
  bool integer = op == "MatMulInteger" || op == "ConvInteger" || op == "QLinearMatMul" ||
                 op == "QLinearConv" || op == "DynamicQuantizeMatMul" ||
                 op == "MatMulIntegerToFloat";
  if (other_cpu && integer) {
    // integer products are exact: a difference is a kernel that saturates or drops bits, as
    // x86's AVX2 u8s8 kernels do (vpmaddubsw saturates the int16 sum of two products) where
    // AVX-512 VNNI and ARM's dot products do not
    f.fix.summary =
        "an int8 kernel of side B's CPU does not compute the exact integer products (x86 CPUs "
        "without VNNI saturate the int16 sum of two uint8 x int8 products); quantize the weights "
        "with reduce_range=True, or activations and weights both as int8 (S8S8), for that CPU";
  } else if (other_cpu) {
    f.fix.summary =
        "the CPUs' kernels round differently (each CPU gets its own vectorized kernels: expected "
        "across architectures and instruction sets); accept it where it is made (twice the error "
        "measured here; the tensors computed from it keep their own tolerances)";
    if (!tol.empty()) f.fix.compare_flags = {"--op-tol", tol};
  } else if (other_runtime) {
    std::string version = RuntimeName(a.ort_library);
    version = version.substr(version.rfind(' ') + 1);
    auto installed = OrtLibraryForVersion(version);
    bool by_version = installed.ok() && ResolvedLibrary(*installed) == lib_a;
    f.fix.compare_flags = by_version ? std::vector<std::string>{"--b-ort-version", version}
                                     : std::vector<std::string>{"--b-ort-lib", lib_a};
    f.fix.summary = "keep side A's runtime for this model (side B on " + name_a + ")" + accept;
  } else {
    f.fix.summary =
        "accept the provider's rounding where it is made (twice the error measured "
        "here; the tensors computed from it keep their own tolerances)";
    if (!tol.empty()) f.fix.compare_flags = {"--op-tol", tol};
  }
  found->push_back(std::move(f));
}

// Runtime session entries that trade precision for speed when set to "1", with what they do.
struct FastMath {
  const char* key;
  const char* what;
};
constexpr FastMath kFastMath[] = {
    {"mlas.enable_gemm_fastmath_arm64_bfloat16",
     "computes MatMul/Gemm/Conv on aarch64 with bfloat16 products (8-bit significands)"},
};

// Side B's session sets a fast-math entry: the node alone on side B's runtime without it. When
// that gives side A's values (within tolerance, and at most a quarter of the error), the entry is
// the cause, whatever the kernels of two CPUs or runtimes also do.
bool FastMathOption(Ctx& cx, CaseRunner& run, const Culprit1& c, std::vector<Finding>* found,
                    std::string* tried) {
  const DiagnoseSide& b = cx.in.b;
  if (b.model == nullptr) return false;
  std::string op = c.culprit != nullptr ? c.culprit->op_type : "";
  for (const FastMath& fm : kFastMath) {
    auto it = b.session.config_entries.find(fm.key);
    if (it == b.session.config_entries.end() || it->second != "1") continue;
    SessionOptions o = b.session;
    o.config_entries.erase(fm.key);
    auto got = run.Run(b.ort_library, o);
    if (!got.ok()) {
      Tried(tried, std::string("side B's runtime without ") + fm.key +
                       " could not run the node alone: " + got.status().message());
      continue;
    }
    double d = MaxAbsDiff(c.data.expected, (*got)[0]);
    bool within =
        WithinTolerance(c.data.expected, (*got)[0], cx.in.comparison->policy, c.data.tensor, op);
    if (!(within && d <= c.error / 4)) {
      Tried(tried, std::string("without ") + fm.key + " side B still differs by " + Num(d));
      continue;
    }
    Finding f = Base(c, Cause::kFastMathOption);
    f.certainty = Certainty::kConfirmed;
    f.summary = std::string("side B's session entry ") + fm.key + "=1 " + fm.what;
    f.evidence = "the node alone on side B's runtime differs from side A's values by " +
                 Num(c.error) + " with it and by " + Num(d) + " without it";
    f.fix.summary = std::string("leave ") + fm.key +
                    " off where these numbers matter (it is off by default), or accept its "
                    "rounding with a tolerance of its own";
    f.fix.compare_flags = {"--b-session-config", std::string(fm.key) + "=0"};
    found->push_back(std::move(f));
    return true;
  }
  return false;
}

}  // namespace

void RuntimeCauses(Ctx& cx, const Culprit1& c, std::vector<Finding>* found, std::string* tried) {
  CaseRunner run(c.data, &cx.runs);
  if (Repeats(cx, run, c, found, tried)) return;  // noise hides every other experiment's answer
  if (FastMathOption(cx, run, c, found, tried)) return;
  Optimizer(cx, run, c, found, tried);
  KernelChange(cx, run, c, found, tried);
}

}  // namespace onnxprobe::diagnose
