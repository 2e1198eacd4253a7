// onnxprobe replay DIR: rerun a repro bundle and say whether the mismatch reproduces.
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "cli.h"
#include "onnxprobe/json_value.h"
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

std::string Str(const JsonValue& j, const char* k) {
  const JsonValue* v = j.Find(k);
  return v != nullptr && v->is_string() ? v->as_string() : "";
}

double Num(const JsonValue& j, const char* k, double fallback) {
  const JsonValue* v = j.Find(k);
  return v != nullptr && v->is_number() ? v->as_number() : fallback;
}

}  // namespace

int RunReplay(Args& args) {
  std::string dir;
  SessionFlags flags;
  TolerancePolicy policy;
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
  std::error_code ec;
  std::string meta_path = (std::filesystem::path(dir) / "onnxprobe.json").string();
  if (std::filesystem::exists(meta_path, ec)) {
    std::FILE* f = std::fopen(meta_path.c_str(), "rb");
    std::string text;
    if (f != nullptr) {
      char buf[4096];
      size_t n;
      while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) text.append(buf, n);
      std::fclose(f);
    }
    auto j = ParseJson(text, meta_path);
    if (!j.ok()) return Fail(j.status());
    SessionFlags recorded;
    recorded.session.provider = Str(*j, "provider").empty() ? "CPU" : Str(*j, "provider");
    recorded.session.optimization_level = static_cast<int>(Num(*j, "optimization_level", 0));
    if (const JsonValue* po = j->Find("provider_options"); po != nullptr) {
      for (const auto& [k, v] : po->members()) {
        if (v.is_string()) recorded.session.provider_options[k] = v.as_string();
      }
    }
    std::string runtime = Str(*j, "runtime");  // "onnxruntime 1.20.1"
    std::string version = runtime.rfind("onnxruntime ", 0) == 0 ? runtime.substr(12) : "";
    if (!version.empty()) {  // the runtime the mismatch was seen on, when installed here
      auto lib = OrtLibraryForVersion(version);
      if (lib.ok()) recorded.ort_lib = *lib;
    }
    policy.global.atol = Num(*j, "atol", policy.global.atol);
    policy.global.rtol = Num(*j, "rtol", policy.global.rtol);
    policy.rel_eps = Num(*j, "rel_eps", policy.rel_eps);
    if (const JsonValue* sa = j->Find("scale_atol"); sa != nullptr)
      policy.global.scale_atol = sa->as_bool();
    flags = MergeSessionFlags(recorded, flags);
  }
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
