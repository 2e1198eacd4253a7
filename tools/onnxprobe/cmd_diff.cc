// onnxprobe diff A.onnx B.onnx [--json]
#include <cstdio>

#include "cli.h"
#include "onnxprobe/model.h"
#include "onnxprobe/model_diff.h"

namespace onnxprobe::cli {
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
  int Run() override {
    auto a = Model::Load(a_);
    if (!a.ok()) return Fail(a.status());
    auto b = Model::Load(b_);
    if (!b.ok()) return Fail(b.status());
    auto d = DiffModels(*a, *b);
    if (!d.ok()) return Fail(d.status());
    Status st =
        PrintWithJson(json_, RenderModelDiffText(*d), json_.on ? RenderModelDiffJson(*d) : "");
    if (!st.ok()) return Fail(st);
    return d->Identical() ? kExitOk : kExitMismatch;
  }

 private:
  std::string a_, b_;
  JsonOutput json_;
};

}  // namespace

std::unique_ptr<Command> MakeDiffCommand() { return std::make_unique<DiffCommand>(); }

}  // namespace onnxprobe::cli
