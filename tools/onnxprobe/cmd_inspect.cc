// onnxprobe inspect MODEL [--tensors] [--json]
#include <cstdio>

#include "cli.h"
#include "onnxprobe/json.h"
#include "onnxprobe/model.h"

namespace onnxprobe::cli {
namespace {

struct InspectOptions {
  bool tensors = false;
  bool json = false;
};

std::string OpsetString(const ModelSummary& s) {
  std::string out;
  for (const auto& o : s.opsets) {
    out += (out.empty() ? "" : ", ") + (o.domain.empty() ? std::string("ai.onnx") : o.domain) +
           " " + std::to_string(o.version);
  }
  return out;
}

void ValueInfoJson(JsonWriter& j, const ValueInfo& v) {
  j.BeginObject().Key("name").String(v.name);
  auto dt = DTypeFromOnnx(v.elem_type);
  j.Key("dtype").String(dt.ok() ? DTypeName(*dt) : OnnxTypeName(v.elem_type));
  j.Key("shape");
  if (!v.has_shape) {
    j.Null();
  } else {
    j.BeginArray();
    for (const Dim& d : v.dims) {
      if (d.value >= 0)
        j.Int(d.value);
      else if (!d.param.empty())
        j.String(d.param);
      else
        j.Null();
    }
    j.EndArray();
  }
  j.EndObject();
}

int PrintJson(const Model& m, const FileHashes& h, const InspectOptions& o) {
  const ModelSummary& s = m.summary();
  auto init_hashes = m.InitializerHashes();
  if (!init_hashes.ok()) return Fail(init_hashes.status());
  JsonWriter j;
  j.BeginObject();
  j.Key("model").String(m.path()).Key("ir_version").Int(s.ir_version);
  j.Key("opsets").BeginArray();
  for (const auto& op : s.opsets) {
    j.BeginObject().Key("domain").String(op.domain).Key("version").Int(op.version).EndObject();
  }
  j.EndArray();
  j.Key("producer_name").String(s.producer_name).Key("producer_version").String(s.producer_version);
  j.Key("file_size").UInt(h.size).Key("md5").String(h.md5).Key("sha256").String(h.sha256);
  j.Key("inputs").BeginArray();
  for (const auto& v : s.inputs) ValueInfoJson(j, v);
  j.EndArray().Key("outputs").BeginArray();
  for (const auto& v : s.outputs) ValueInfoJson(j, v);
  j.EndArray();
  j.Key("node_count").UInt(m.index().nodes().size());
  j.Key("op_counts").BeginObject();
  for (const auto& [op, n] : s.op_counts) j.Key(op).Int(n);
  j.EndObject();
  j.Key("param_count").UInt(s.param_count).Key("param_bytes").UInt(s.param_bytes);
  j.Key("initializers").BeginArray();
  for (size_t i = 0; i < s.initializers.size(); ++i) {
    const auto& ii = s.initializers[i];
    j.BeginObject().Key("name").String(ii.name);
    auto dt = DTypeFromOnnx(ii.elem_type);
    j.Key("dtype").String(dt.ok() ? DTypeName(*dt) : OnnxTypeName(ii.elem_type));
    j.Key("shape")
        .IntArray(ii.dims)
        .Key("bytes")
        .UInt(ii.num_bytes)
        .Key("external")
        .Bool(ii.external);
    j.Key("sha256").String((*init_hashes)[i].second);
    j.EndObject();
  }
  j.EndArray();
  j.Key("checker_warnings").BeginArray();
  for (const auto& w : m.checker_warnings()) j.String(w);
  j.EndArray();
  if (o.tensors) {
    j.Key("tensors").BeginArray();
    for (const auto& t : m.index().tensors()) {
      j.BeginObject().Key("name").String(t.name).Key("kind").String(TensorKindName(t.kind));
      if (t.producer >= 0) {
        const NodeInfo& n = m.index().nodes()[t.producer];
        j.Key("node")
            .String(n.name)
            .Key("op_type")
            .String(n.op_type)
            .Key("topo_index")
            .Int(n.topo_index);
      }
      if (t.subgraph_owner >= 0)
        j.Key("inside_node").String(m.index().nodes()[t.subgraph_owner].name);
      j.EndObject();
    }
    j.EndArray();
  }
  j.EndObject();
  std::printf("%s\n", j.str().c_str());
  return kExitOk;
}

void PrintText(const Model& m, const FileHashes& h, const InspectOptions& o) {
  const ModelSummary& s = m.summary();
  std::printf("model       %s (%s)\n", m.path().c_str(), HumanBytes(h.size).c_str());
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
              HumanBytes(s.param_bytes).c_str());
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
    return "model summary: inputs, outputs, opsets, ops, parameters, hashes";
  }
  void Declare(OptionSink& sink) override {
    sink.Positional("MODEL", ".onnx model", &model_, true);
    sink.Add({"--tensors", "", "list every tensor in topological order with its producing node"},
             [this](const std::string&) {
               o_.tensors = true;
               return Status::Ok();
             });
    sink.Add({"--json", "", "machine-readable output"}, [this](const std::string&) {
      o_.json = true;
      return Status::Ok();
    });
  }
  int Run() override {
    auto model = Model::Load(model_, LoadMode::kGraphOnly);  // streams: never holds the weights
    if (!model.ok()) return Fail(model.status());
    FileHashes hashes = model->Hashes();
    if (o_.json) return PrintJson(*model, hashes, o_);
    PrintText(*model, hashes, o_);
    return kExitOk;
  }

 private:
  std::string model_;
  InspectOptions o_;
};

}  // namespace

std::unique_ptr<Command> MakeInspectCommand() { return std::make_unique<InspectCommand>(); }

}  // namespace onnxprobe::cli
