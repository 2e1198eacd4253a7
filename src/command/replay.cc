// replay DIR: rerun a repro bundle and say whether the mismatch reproduces.
#include "command/commands.h"
#include "onnxprobe/common/format.h"
#include "onnxprobe/localize/localize.h"

namespace onnxprobe::cmd {
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

  Expected<CommandOutput> Execute(const CommandContext& /*context*/) override {
    const std::string& dir = dir_;
    OP_ASSIGN_OR_RETURN(ReproSettings recorded, ReadReproSettings(dir));
    SessionFlags from_bundle;
    from_bundle.session = recorded.session;
    from_bundle.ort_lib = recorded.ort_library;
    SessionFlags flags = MergeSessionFlags(from_bundle, session_);  // flags given here win
    TolerancePolicy policy = recorded.policy;
    tolerance_.ApplyTo(&policy);
    OP_ASSIGN_OR_RETURN(std::string lib, ResolveOrtLibrary(flags));
    OP_ASSIGN_OR_RETURN(ReplayResult rr, ReplayBundle(dir, lib, flags.session, policy));
    CommandOutput out;
    for (const auto& row : rr.rows) {
      out.text += row.name + ": " + (row.pass ? "matches" : "MISMATCH") + ", max abs " +
                  FormatNumber(row.metrics.max_abs) + ", max rel " +
                  FormatNumber(row.metrics.max_rel) + (row.pass ? "" : ": " + row.reason) + "\n";
    }
    out.text += dir + " on " + rr.runtime + ", provider " + flags.session.provider + ": mismatch " +
                (rr.failures ? "REPRODUCED" : "not reproduced") + "\n";
    out.exit_code = rr.failures ? kExitMismatch : kExitOk;
    return out;
  }

 private:
  std::string dir_;
  SessionFlags session_;
  ToleranceFlags tolerance_;
};

}  // namespace

std::unique_ptr<Command> MakeReplayCommand() { return std::make_unique<ReplayCommand>(); }

}  // namespace onnxprobe::cmd
