// onnxprobe diff A.onnx B.onnx [--json]
#include "command/commands.h"
#include "onnxprobe/model/model.h"
#include "onnxprobe/model/model_diff.h"
#include "onnxprobe/report/model_diff_report.h"

namespace onnxprobe::cmd {
namespace {

class DiffCommand : public Command {
 public:
  const char* name() const override { return "diff"; }
  const char* summary() const override {
    return "what changed between two models: nodes, attributes, weights, opsets, metadata";
  }
  std::string footer() const override {
    return "Nodes are matched by name, then by structure (a renamed node is not added + removed);\n"
           "docs/diff.md. Exit 0 here means identical, 1 that the models differ.";
  }
  void Declare(OptionSink& sink) override {
    sink.Positional("A", "first .onnx model", &a_, true);
    sink.Positional("B", "second .onnx model", &b_, true);
    sink.Add(JsonOption("machine-readable output (schema onnxprobe-diff)"),
             [this](const std::string& v) { return SetJsonOutput(v, &json_); });
  }
  Status Validate() override { return CheckJsonOutput(json_, {a_, b_}, false); }
  Expected<CommandOutput> Execute(const CommandContext& /*context*/) override {
    OP_ASSIGN_OR_RETURN(Model a, Model::Load(a_));
    OP_ASSIGN_OR_RETURN(Model b, Model::Load(b_));
    OP_ASSIGN_OR_RETURN(ModelDiff d, DiffModels(a, b));
    CommandOutput out;
    out.documents["json"] = RenderModelDiffJson(d);
    OP_ASSIGN_OR_RETURN(out.text,
                        ConsoleWithJson(json_, RenderModelDiffText(d), out.documents["json"]));
    out.exit_code = d.Identical() ? kExitOk : kExitMismatch;
    return out;
  }

 private:
  std::string a_, b_;
  JsonOutput json_;
};

}  // namespace

std::unique_ptr<Command> MakeDiffCommand() { return std::make_unique<DiffCommand>(); }

}  // namespace onnxprobe::cmd
