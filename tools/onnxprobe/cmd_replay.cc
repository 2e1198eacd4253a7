// onnxprobe replay DIR: rerun a repro bundle and say whether the mismatch reproduces.
#include <cstdio>
#include <cstdlib>

#include "cli.h"
#include "onnxprobe/localize.h"
#include "onnxprobe/report.h"

namespace onnxprobe::cli {
namespace {

constexpr const char* kHelp =
    "usage: onnxprobe replay DIR [--provider NAME] [--opt-level L] [--ort-version X | --ort-lib "
    "PATH]\n"
    "                            [--atol X] [--rtol X]\n"
    "Runs DIR/model.onnx on DIR/test_data_set_0/input_K.pb and compares with output_K.pb (the\n"
    "reference's outputs). Settings default to those recorded in DIR/onnxprobe.json.\n"
    "Exit code 1 when the mismatch reproduces, 0 when every output is within tolerance.\n";

}  // namespace

int RunReplay(Args& args) {
  std::string dir;
  SessionFlags flags;
  double override_atol = -1, override_rtol = -1;
  Status st;
  while (!args.Done()) {
    if (args.Flag("--help") || args.Flag("-h")) {
      std::fputs(kHelp, stdout);
      return kExitOk;
    }
    if (ParseSessionFlag(args, "", &flags, &st)) {
      if (!st.ok()) return Fail(st);
    } else if (bool is_atol = false; (is_atol = args.Flag("--atol")) || args.Flag("--rtol")) {
      auto v = args.Value();
      if (!v.ok()) return Fail(v.status());
      char* end = nullptr;
      double x = std::strtod(v->c_str(), &end);
      if (v->empty() || *end || !(x >= 0))
        return Fail(InvalidArgument("bad tolerance '" + *v + "'"));
      (is_atol ? override_atol : override_rtol) = x;
    } else if (!args.Peek().empty() && args.Peek()[0] == '-') {
      return Fail(InvalidArgument("replay: unknown option '" + args.Peek() + "'"));
    } else if (dir.empty()) {
      dir = args.Next();
    } else {
      return Fail(InvalidArgument("replay: unexpected argument '" + args.Peek() + "'"));
    }
  }
  if (dir.empty()) return Fail(InvalidArgument("replay: no bundle folder given"));
  auto recorded = ReadReproSettings(dir);
  if (!recorded.ok()) return Fail(recorded.status());
  SessionFlags from_bundle;
  from_bundle.session = recorded->session;
  from_bundle.ort_lib = recorded->ort_library;
  flags = MergeSessionFlags(from_bundle, flags);  // flags given here win
  TolerancePolicy policy = recorded->policy;
  if (override_atol >= 0) policy.global.atol = override_atol;
  if (override_rtol >= 0) policy.global.rtol = override_rtol;
  auto lib = ResolveOrtLibrary(flags);
  if (!lib.ok()) return Fail(lib.status());
  auto rr = ReplayBundle(dir, *lib, flags.session, policy);
  if (!rr.ok()) return Fail(rr.status());
  for (const auto& row : rr->rows) {
    std::printf("%s: %s, max abs %.3g, max rel %.3g%s%s\n", row.name.c_str(),
                row.pass ? "matches" : "MISMATCH", row.metrics.max_abs, row.metrics.max_rel,
                row.pass ? "" : ": ", row.reason.c_str());
  }
  std::printf("%s on %s, provider %s: mismatch %s\n", dir.c_str(), rr->runtime.c_str(),
              flags.session.provider.c_str(), rr->failures ? "REPRODUCED" : "not reproduced");
  return rr->failures ? kExitMismatch : kExitOk;
}

}  // namespace onnxprobe::cli
