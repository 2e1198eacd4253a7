// onnxprobe inspect MODEL|DUMP [--tensors] [--json[=FILE]]
#include <cstdio>
#include <filesystem>

#include "cli.h"
#include "onnxprobe/capture/dump.h"
#include "onnxprobe/capture/dump_summary.h"
#include "onnxprobe/common/format.h"
#include "onnxprobe/model/model.h"
#include "onnxprobe/model/model_json.h"
#include "onnxprobe/report/dump_summary_report.h"

namespace onnxprobe::cli {
namespace {

struct InspectOptions {
  bool tensors = false;
  JsonOutput json;
};

std::string OpsetString(const ModelSummary& s) {
  std::string out;
  for (const auto& o : s.opsets) {
    out += (out.empty() ? "" : ", ") + (o.domain.empty() ? std::string("ai.onnx") : o.domain) +
           " " + std::to_string(o.version);
  }
  return out;
}

void PrintText(const Model& m, const FileHashes& h, const InspectOptions& o) {
  const ModelSummary& s = m.summary();
  std::printf("model       %s (%s)\n", m.path().c_str(), FormatBytes(h.size).c_str());
  std::printf("ir_version  %lld\n", static_cast<long long>(s.ir_version));
  std::printf("opsets      %s\n", OpsetString(s).c_str());
  std::printf("producer    %s %s\n", s.producer_name.c_str(), s.producer_version.c_str());
  std::printf("md5         %s\nsha256      %s\n", h.md5.c_str(), h.sha256.c_str());
  std::printf("inputs\n");
  for (const auto& v : s.inputs)
    std::printf("  %-30s %s\n", v.name.c_str(), ValueInfoTypeString(v).c_str());
  std::printf("outputs\n");
  for (const auto& v : s.outputs)
    std::printf("  %-30s %s\n", v.name.c_str(), ValueInfoTypeString(v).c_str());
  std::printf("nodes       %zu\n", m.index().nodes().size());
  for (const auto& [op, n] : s.op_counts) std::printf("  %-20s %d\n", op.c_str(), n);
  std::printf("parameters  %llu in %zu initializers (%s)\n",
              static_cast<unsigned long long>(s.param_count), s.initializers.size(),
              FormatBytes(s.param_bytes).c_str());
  for (const auto& w : m.checker_warnings()) std::printf("warning     %s\n", w.c_str());
  if (!o.tensors) return;
  std::printf("\ntensors in topological order\n  %5s  %-12s  %-40s  %-16s  %s\n", "topo", "kind",
              "tensor", "op", "node");
  for (const auto& t : m.index().tensors()) {
    std::string topo = "-", op = "", node = "";
    if (t.producer >= 0) {
      const NodeInfo& n = m.index().nodes()[t.producer];
      topo = std::to_string(n.topo_index);
      op = n.op_type;
      node = n.name;
    }
    if (t.subgraph_owner >= 0)
      node = "inside " + m.index().nodes()[t.subgraph_owner].name + " (not capturable)";
    std::printf("  %5s  %-12s  %-40s  %-16s  %s\n", topo.c_str(), TensorKindName(t.kind),
                t.name.c_str(), op.c_str(), node.c_str());
  }
}

class InspectCommand : public Command {
 public:
  const char* name() const override { return "inspect"; }
  const char* summary() const override {
    return "model summary (inputs, outputs, opsets, ops, parameters, hashes), or a dump's tensors "
           "with statistics";
  }
  void Declare(OptionSink& sink) override {
    sink.Positional("MODEL", ".onnx model, or a dump (folder or .npz) from run", &model_, true);
    sink.Add({"--tensors", "", "list every tensor in topological order with its producing node"},
             [this](const std::string&) {
               o_.tensors = true;
               return Status::Ok();
             });
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
  int Run() override {
    if (IsDump()) {
      auto summary = SummarizeDump(model_);
      if (!summary.ok()) return Fail(summary.status());
      Status st = PrintWithJson(o_.json, RenderDumpSummaryText(*summary),
                                o_.json.on ? RenderDumpSummaryJson(*summary) : "");
      return st.ok() ? kExitOk : Fail(st);
    }
    auto model = Model::Load(model_, LoadMode::kGraphOnly);  // streams: never holds the weights
    if (!model.ok()) return Fail(model.status());
    if (o_.json.on) {
      auto json = InspectJson(*model, o_.tensors);
      if (!json.ok()) return Fail(json.status());
      Status st = EmitJson(o_.json, *json);
      if (!st.ok()) return Fail(st);
      if (o_.json.file.empty()) return kExitOk;
    }
    PrintText(*model, model->Hashes(), o_);
    return kExitOk;
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

}  // namespace onnxprobe::cli
