// onnxprobe replay DIR: rerun a repro bundle and say whether the mismatch reproduces.
#include <cstdio>

#include "cli.h"
#include "onnxprobe/format.h"
#include "onnxprobe/localize.h"

namespace onnxprobe::cli {
namespace {

class ReplayCommand : public Command {
 public:
  const char* name() const override { return "replay"; }
  const char* summary() const override { return "rerun a repro bundle written by compare --repro"; }
  std::string footer() const override {
    return "Runs DIR/model.onnx on DIR/test_data_set_0/input_K.pb and compares with output_K.pb\n"
           "(the reference's outputs). Settings default to those recorded in DIR/onnxprobe.json;\n"
           "options given here override them. Exit code 1 when the mismatch reproduces, 0 when\n"
           "every output is within tolerance.";
  }
  void Declare(OptionSink& sink) override {
    sink.Positional("DIR", "repro bundle folder", &dir_, true);
    sink.Section("runtime (default: as recorded)");
    DeclareSessionOptions(sink, "", &session_);
    DeclareToleranceOptions(sink, &tolerance_);
  }

  int Run() override {
    const std::string& dir = dir_;
    auto recorded = ReadReproSettings(dir);
    if (!recorded.ok()) return Fail(recorded.status());
    SessionFlags from_bundle;
    from_bundle.session = recorded->session;
    from_bundle.ort_lib = recorded->ort_library;
    SessionFlags flags = MergeSessionFlags(from_bundle, session_);  // flags given here win
    TolerancePolicy policy = recorded->policy;
    tolerance_.ApplyTo(&policy);
    auto lib = ResolveOrtLibrary(flags);
    if (!lib.ok()) return Fail(lib.status());
    auto rr = ReplayBundle(dir, *lib, flags.session, policy);
    if (!rr.ok()) return Fail(rr.status());
    for (const auto& row : rr->rows) {
      std::printf("%s: %s, max abs %s, max rel %s%s%s\n", row.name.c_str(),
                  row.pass ? "matches" : "MISMATCH", FormatNumber(row.metrics.max_abs).c_str(),
                  FormatNumber(row.metrics.max_rel).c_str(), row.pass ? "" : ": ",
                  row.reason.c_str());
    }
    std::printf("%s on %s, provider %s: mismatch %s\n", dir.c_str(), rr->runtime.c_str(),
                flags.session.provider.c_str(), rr->failures ? "REPRODUCED" : "not reproduced");
    return rr->failures ? kExitMismatch : kExitOk;
  }

 private:
  std::string dir_;
  SessionFlags session_;
  ToleranceFlags tolerance_;
};

}  // namespace

std::unique_ptr<Command> MakeReplayCommand() { return std::make_unique<ReplayCommand>(); }

}  // namespace onnxprobe::cli
