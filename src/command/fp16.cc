// onnxprobe fp16 MODEL: which nodes float16 hurts, a block list, and the converted model.
#include "onnxprobe/fp16/fp16.h"

#include "command/commands.h"
#include "common/file_util.h"
#include "onnxprobe/report/fp16_report.h"

namespace onnxprobe::cmd {
namespace {

class Fp16Command : public Command {
 public:
  const char* name() const override { return "fp16"; }
  const char* summary() const override {
    return "float16 sensitivity: overflow, isolated per-node error, a block list and the "
           "converted model";
  }
  std::string footer() const override {
    return "One float32 run measures every tensor for float16; every node runs alone in float16\n"
           "(batched into few runs) and is ranked; nodes are kept in float32 in rank order until\n"
           "the converted model matches float32 on the inputs (|fp16 - fp32| <= atol + atol-scale\n"
           "max|fp32| + rtol |fp32|, per output).\nExit 1 when no block list reaches the "
           "tolerance. See docs/fp16.md.";
  }
  void Declare(OptionSink& sink) override {
    sink.Positional("MODEL", "float32 .onnx model", &req_.model, true);
    sink.Section("conversion");
    sink.Add({"--atol", "X", "absolute tolerance of the converted model's outputs (default 0)"},
             [this](const std::string& v) -> Status {
               OP_ASSIGN_OR_RETURN(req_.atol, ParseTolerance(v, "--atol"));
               return Status::Ok();
             });
    sink.Add({"--atol-scale", "X",
              "plus X times the output's largest |value| (default 1e-2; 0 for a plain --atol)"},
             [this](const std::string& v) -> Status {
               OP_ASSIGN_OR_RETURN(req_.atol_scale, ParseTolerance(v, "--atol-scale"));
               return Status::Ok();
             });
    sink.Add({"--rtol", "X", "relative tolerance (default 1e-2)"},
             [this](const std::string& v) -> Status {
               OP_ASSIGN_OR_RETURN(req_.rtol, ParseTolerance(v, "--rtol"));
               return Status::Ok();
             });
    sink.Add({"--keep-fp32", "NODE,NODE", "node names always kept in float32", true},
             [this](const std::string& v) {
               for (auto& n : SplitList(v)) req_.keep_fp32.push_back(n);
               return Status::Ok();
             });
    sink.Add({"--max-block", "N", "at most N nodes in float32 (default: no limit)"},
             [this](const std::string& v) -> Status {
               OP_ASSIGN_OR_RETURN(int64_t n, ParseInt(v, "--max-block"));
               if (n < 0 || n > 1000000000) return InvalidArgument("--max-block must be >= 0");
               req_.max_blocked = static_cast<int>(n);
               return Status::Ok();
             });
    sink.Section("output");
    sink.Add({"-o,--output", "OUT.onnx", "write the converted model (when it passes)"},
             [this](const std::string& v) {
               req_.output_model = v;
               return Status::Ok();
             });
    sink.Add({"--json", "FILE", "the report as JSON (schema onnxprobe-fp16)"},
             [this](const std::string& v) { return SetJsonFile(v, &json_file_); });
    sink.Add({"--rows", "N", "node rows shown (default 10)"},
             [this](const std::string& v) -> Status {
               OP_ASSIGN_OR_RETURN(int64_t n, ParseInt(v, "--rows"));
               if (n < 0) return InvalidArgument("--rows must be >= 0");
               rows_ = static_cast<size_t>(n);
               return Status::Ok();
             });
    DeclareSwitch(sink, "--force", &force_,
                  "replace existing files that are not onnxprobe outputs of the kind");
    DeclareInputOptions(sink, &inputs_);
    sink.Section("runtime");
    DeclareSessionOptions(sink, "", &session_);
    DeclareMaxMemory(sink, &req_.isolation_batch_bytes,
                     "float16 outputs held by one isolation run (default 1G)");
  }

  Status Validate() override {
    std::vector<std::string> inputs = InputFilePaths(inputs_);
    inputs.push_back(req_.model);
    OP_RETURN_IF_ERROR(CheckDistinctOutputs({{"--json", json_file_}, {"-o", req_.output_model}}));
    if (!json_file_.empty()) {
      OP_RETURN_IF_ERROR(CheckOutput("--json", json_file_, OutputKind::kFp16Json, inputs, force_));
    }
    if (!req_.output_model.empty()) {
      OP_RETURN_IF_ERROR(
          CheckOutput("-o", req_.output_model, OutputKind::kFp16Model, inputs, force_));
    }
    return Status::Ok();
  }

  Expected<CommandOutput> Execute(const CommandContext& /*context*/) override {
    req_.inputs = inputs_.options;
    req_.session = session_.session;
    OP_ASSIGN_OR_RETURN(req_.ort_library, ResolveOrtLibrary(session_));
    OP_ASSIGN_OR_RETURN(Fp16Report rep, AnalyzeFp16(req_));
    CommandOutput out;
    out.documents["json"] = RenderFp16Json(rep);
    if (!json_file_.empty()) OP_RETURN_IF_ERROR(WriteFileAtomic(json_file_, out.documents["json"]));
    out.text = RenderFp16Text(rep, rows_);
    out.exit_code = rep.passed ? kExitOk : kExitMismatch;
    return out;
  }

 private:
  Fp16Request req_;
  InputFlags inputs_;
  SessionFlags session_;
  std::string json_file_;
  size_t rows_ = 10;
  bool force_ = false;
};

}  // namespace

std::unique_ptr<Command> MakeFp16Command() { return std::make_unique<Fp16Command>(); }

}  // namespace onnxprobe::cmd
