#include "onnxprobe/model/model_json.h"

#include "onnxprobe/common/json.h"

namespace onnxprobe {
namespace {

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

void TensorsJson(JsonWriter& j, const Model& m) {
  j.Key("tensors").BeginArray();
  for (const auto& t : m.index().tensors()) {
    j.BeginObject().Key("name").String(t.name).Key("kind").String(TensorKindName(t.kind));
    if (t.producer >= 0) {
      const NodeInfo& n = m.index().nodes()[t.producer];
      j.Key("node").String(n.name).Key("op_type").String(n.op_type);
      j.Key("topo_index").Int(n.topo_index);
    }
    if (t.subgraph_owner >= 0)
      j.Key("inside_node").String(m.index().nodes()[t.subgraph_owner].name);
    j.EndObject();
  }
  j.EndArray();
}

}  // namespace

Expected<std::string> InspectJson(const Model& m, bool with_tensors) {
  const ModelSummary& s = m.summary();
  FileHashes h = m.Hashes();
  OP_ASSIGN_OR_RETURN(auto init_hashes, m.InitializerHashes());
  JsonWriter j;
  j.BeginObject();
  j.Key("schema").String("onnxprobe-inspect");
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
  j.Key("constant_nodes").UInt(s.constant_nodes);
  j.Key("constant_param_count").UInt(s.constant_param_count);
  j.Key("initializers").BeginArray();
  for (size_t i = 0; i < s.initializers.size(); ++i) {
    const auto& ii = s.initializers[i];
    j.BeginObject().Key("name").String(ii.name);
    auto dt = DTypeFromOnnx(ii.elem_type);
    j.Key("dtype").String(dt.ok() ? DTypeName(*dt) : OnnxTypeName(ii.elem_type));
    j.Key("shape").IntArray(ii.dims).Key("bytes").UInt(ii.num_bytes);
    j.Key("external").Bool(ii.external);
    j.Key("sha256").String(init_hashes[i].second);
    j.EndObject();
  }
  j.EndArray();
  j.Key("checker_warnings").BeginArray();
  for (const auto& w : m.checker_warnings()) j.String(w);
  j.EndArray();
  if (with_tensors) TensorsJson(j, m);
  j.EndObject();
  return j.str();
}

}  // namespace onnxprobe
