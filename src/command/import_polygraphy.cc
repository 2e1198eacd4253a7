// import-polygraphy OUT.json -o DUMP: Polygraphy's saved results as a dump.
#include "command/commands.h"
#include "onnxprobe/capture/output_guard.h"
#include "onnxprobe/capture/polygraphy.h"
#include "onnxprobe/common/format.h"

namespace onnxprobe::cmd {
namespace {

class ImportPolygraphyCommand : public Command {
 public:
  const char* name() const override { return "import-polygraphy"; }
  const char* summary() const override {
    return "turn `polygraphy run --save-outputs` results into a dump any command reads";
  }
  std::string footer() const override {
    return "Example:\n"
           "  polygraphy run model.onnx --trt --onnx-outputs mark all --save-inputs in.json \\\n"
           "      --save-outputs trt.json\n"
           "  onnxprobe import-polygraphy trt.json --inputs in.json --model model.onnx -o "
           "trt.dump\n"
           "  onnxprobe compare model.onnx trt.dump     # the CPU provider against TensorRT's "
           "values\n"
           "With --inputs the dump carries the inputs, so the live side runs on exactly them; "
           "with\n"
           "--model each tensor gets its node and place in the graph (without it: name order).";
  }
  void Declare(OptionSink& sink) override {
    sink.Positional("RESULTS", "Polygraphy results JSON (--save-outputs)", &req_.outputs_file,
                    true);
    DeclareString(sink, "-o,--output", "DUMP", &req_.output,
                  "dump to write: a folder, or FILE.npz");
    DeclareString(sink, "--inputs", "FILE", &req_.inputs_file,
                  "Polygraphy inputs JSON (--save-inputs) of the same run");
    DeclareString(sink, "--model", "MODEL", &req_.model_path,
                  "the .onnx model the results come from");
    DeclareString(sink, "--runner", "NAME", &req_.runner,
                  "which runner's results (needed when the file holds several)");
    sink.Add({"--iteration", "K", "which iteration (default 0)"},
             [this](const std::string& v) -> Status {
               OP_ASSIGN_OR_RETURN(int64_t k, ParseInt(v, "--iteration"));
               if (k < 0) return InvalidArgument("--iteration must be 0 or more");
               req_.iteration = static_cast<size_t>(k);
               return Status::Ok();
             });
    DeclareSwitch(sink, "--force", &force_,
                  "replace an existing file that is not an onnxprobe dump");
    DeclareSwitch(sink, "-q,--quiet", &quiet_, "no summary");
  }

  Status Validate() override {
    if (req_.output.empty()) return InvalidArgument("-o DUMP is required");
    std::vector<std::string> inputs{req_.outputs_file};
    if (!req_.inputs_file.empty()) inputs.push_back(req_.inputs_file);
    if (!req_.model_path.empty()) inputs.push_back(req_.model_path);
    return CheckOutput("-o", req_.output, OutputKind::kDump, inputs, force_);
  }

  Expected<CommandOutput> Execute(const CommandContext& /*context*/) override {
    OP_ASSIGN_OR_RETURN(PolygraphyImportReport r, ImportPolygraphy(req_));
    CommandOutput out;
    if (req_.model_path.empty()) {
      out.Note(
          "no --model: tensors are stored in name order, without their nodes (a "
          "comparison then reports its first divergence in that order); --model MODEL gives "
          "graph order");
    }
    if (!r.not_in_model.empty()) {
      out.Note(std::to_string(r.not_in_model.size()) + " tensor(s) are not made by a node of " +
               req_.model_path + ", e.g. '" + r.not_in_model.front() + "'");
    }
    if (!quiet_) {
      out.text = StringPrintf("%s: %zu tensors and %zu inputs of runner %s, iteration %zu of %zu\n",
                              req_.output.c_str(), r.tensors, r.inputs, r.runner.c_str(),
                              req_.iteration, r.iterations);
    }
    return out;
  }

 private:
  PolygraphyImportRequest req_;
  bool force_ = false, quiet_ = false;
};

}  // namespace

std::unique_ptr<Command> MakeImportPolygraphyCommand() {
  return std::make_unique<ImportPolygraphyCommand>();
}

}  // namespace onnxprobe::cmd
