// inspect MODEL|DUMP [--tensors] [--json[=FILE]]
#include <filesystem>

#include "command/commands.h"
#include "onnxprobe/capture/dump.h"
#include "onnxprobe/capture/dump_summary.h"
#include "onnxprobe/common/format.h"
#include "onnxprobe/model/model.h"
#include "onnxprobe/model/model_json.h"
#include "onnxprobe/report/dump_summary_report.h"
#include "onnxprobe/report/model_summary_report.h"

namespace onnxprobe::cmd {
namespace {

struct InspectOptions {
  bool tensors = false;
  JsonOutput json;
};

class InspectCommand : public Command {
 public:
  const char* name() const override { return "inspect"; }
  const char* summary() const override {
    return "model summary (inputs, outputs, opsets, ops, parameters, hashes), or a dump's tensors "
           "with statistics";
  }
  void Declare(OptionSink& sink) override {
    sink.Positional("MODEL", ".onnx model, or a dump (folder or .npz) from run", &model_, true);
    DeclareSwitch(sink, "--tensors", &o_.tensors,
                  "list every tensor in topological order with its producing node");
    sink.Add(JsonOption("machine-readable output"),
             [this](const std::string& v) { return SetJsonOutput(v, &o_.json); });
  }
  Status Validate() override {
    if (IsDump() && o_.tensors) {
      return InvalidArgument("--tensors does nothing: " + model_ +
                             " is a dump, and its tensors are always listed");
    }
    return CheckJsonOutput(o_.json, {model_}, false);
  }
  Expected<CommandOutput> Execute(const CommandContext& /*context*/) override {
    CommandOutput out;
    if (IsDump()) {
      OP_ASSIGN_OR_RETURN(DumpSummary summary, SummarizeDump(model_));
      out.documents["json"] = RenderDumpSummaryJson(summary);
      OP_ASSIGN_OR_RETURN(out.text, ConsoleWithJson(o_.json, RenderDumpSummaryText(summary),
                                                    out.documents["json"]));
      return out;
    }
    // streams: never holds the weights
    OP_ASSIGN_OR_RETURN(Model model, Model::Load(model_, LoadMode::kGraphOnly));
    OP_ASSIGN_OR_RETURN(out.documents["json"], InspectJson(model, o_.tensors));
    OP_ASSIGN_OR_RETURN(
        out.text,
        ConsoleWithJson(o_.json, RenderModelSummaryText(model, model.Hashes(), o_.tensors),
                        out.documents["json"]));
    return out;
  }

 private:
  // A dump folder (with its manifest), or any .npz (an onnxprobe dump or a plain archive of
  // arrays). Another folder is left to the model loader, which says what it is.
  bool IsDump() const {
    namespace fs = std::filesystem;
    std::error_code ec;
    if (fs::is_directory(model_, ec)) return fs::exists(fs::path(model_) / "manifest.json", ec);
    return fs::path(model_).extension() == ".npz";
  }
  std::string model_;
  InspectOptions o_;
};

}  // namespace

std::unique_ptr<Command> MakeInspectCommand() { return std::make_unique<InspectCommand>(); }

}  // namespace onnxprobe::cmd
