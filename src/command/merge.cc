// merge SHARD.json...: the shards of a comparison over samples (compare --inputs or
// --samples, or baseline check, with --shard I/N, one job each) joined into the report one
// process would write.
#include "onnxprobe/report/merge.h"

#include <fstream>

#include "command/commands.h"
#include "onnxprobe/capture/output_guard.h"
#include "onnxprobe/common/format.h"
#include "onnxprobe/report/sample_report.h"

namespace onnxprobe::cmd {
namespace {

class MergeCommand : public Command {
 public:
  const char* name() const override { return "merge"; }
  const char* summary() const override {
    return "join the JSON reports of compare or baseline check --shard I/N into one "
           "(docs/shard.md)";
  }
  std::string footer() const override {
    return "Each SHARD.json is the --json of `onnxprobe compare ... --inputs DIR --shard I/N` (or\n"
           "--samples N) or of `onnxprobe baseline check ... --shard I/N`; every shard must be\n"
           "given once. The merged report is\n"
           "the one a single process would write over all the samples: each tensor aggregated\n"
           "again over every sample, the verdict over all. Exit 0 when every sample passes, 1\n"
           "when one fails, 2 when the shards do not make one comparison.";
  }
  void Declare(OptionSink& sink) override {
    sink.Positionals("SHARD.json", "a shard's JSON report", &shards_);
    sink.Section("output");
    DeclareString(
        sink, "--json", "FILE", &json_,
        "the merged report (schema onnxprobe-compare-samples or onnxprobe-baseline-check)");
    DeclareSwitch(sink, "--force", &force_,
                  "replace an existing file that is not an onnxprobe report");
  }
  Status Validate() override {
    if (json_.empty() || shards_.empty()) return Status::Ok();
    // the merged report is of the shards' kind: a file of that kind may be replaced
    std::ifstream first(shards_.front(), std::ios::binary);
    std::string head(4096, '\0');
    first.read(head.data(), static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<size_t>(first.gcount()));
    OutputArtifact kind = head.find("\"onnxprobe-baseline-check\"") != std::string::npos
                              ? ArtifactOf(OutputKind::kBaselineCheckJson)
                              : SinkArtifact("json");
    return CheckOutput("--json", json_, kind, shards_, force_);
  }
  Expected<CommandOutput> Execute(const CommandContext& /*context*/) override {
    OP_ASSIGN_OR_RETURN(MergedSamples merged, MergeSampleShards(shards_));
    if (!json_.empty()) OP_RETURN_IF_ERROR(WriteJsonOutput(json_, merged.json));
    CommandOutput out;
    out.documents["json"] = merged.json;
    out.text = RenderAggregateTable(merged.tensors);
    out.text += StringPrintf("merged %zu shards: %zu samples, %zu failed: %s\n", merged.shards,
                             merged.samples, merged.failed_samples,
                             merged.aborted  ? "ERROR (a shard stopped early)"
                             : merged.passed ? "PASS"
                                             : "FAIL");
    if (!json_.empty()) out.text += "JSON report: " + json_ + "\n";
    out.exit_code = merged.aborted ? kExitRuntime : merged.passed ? kExitOk : kExitMismatch;
    return out;
  }

 private:
  std::vector<std::string> shards_;
  std::string json_;
  bool force_ = false;
};

}  // namespace

std::unique_ptr<Command> MakeMergeCommand() { return std::make_unique<MergeCommand>(); }

}  // namespace onnxprobe::cmd
