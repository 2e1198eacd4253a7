// Cuts nodes out of a model into a model of their own (single-node isolation, repro bundles),
// its weights embedded or referenced from the model's files.
// The weights the nodes read are parsed alone out of the model's serialization: isolating one
// node of a 1.5 GB model costs that node's weights, not a parse of every weight held until exit.
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include <climits>
#include <map>
#include <set>

#include "model/model_impl.h"
#include "onnxprobe/graph/graph.h"

namespace onnxprobe {
namespace {

void SetType(onnx::ValueInfoProto* v, const std::string& name, DType dtype, const Shape& shape) {
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(DTypeToOnnx(dtype));
  auto* sh = tt->mutable_shape();
  for (int64_t d : shape) sh->add_dim()->set_dim_value(d);
}

using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;

constexpr int kModelGraph = 7, kGraphInitializer = 5, kTensorName = 8;

bool LengthDelimited(uint32_t tag, int field) {
  return WireFormatLite::GetTagFieldNumber(tag) == field &&
         WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
}

// The name of a serialized TensorProto (protobuf keeps the last occurrence), read field by field
// without copying its data. False when the bytes do not walk.
bool TensorName(const uint8_t* data, int size, std::string* name) {
  CodedInputStream in(data, size);
  name->clear();
  while (uint32_t tag = in.ReadTag()) {
    if (LengthDelimited(tag, kTensorName)) {
      if (!WireFormatLite::ReadString(&in, name)) return false;
    } else if (!WireFormatLite::SkipField(&in, tag)) {
      return false;
    }
  }
  return in.ConsumedEntireMessage();
}

// The main graph's initializers named in `wanted`, each parsed from its own bytes of the model's
// serialization (a later initializer of the same name replaces an earlier one, as in a full
// parse). False when the bytes take a shape this walk does not follow.
bool InitializersFromBytes(const std::string& bytes, const std::set<std::string>& wanted,
                           std::map<std::string, onnx::TensorProto>* out) {
  if (bytes.size() >= size_t(INT_MAX)) return false;
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  CodedInputStream in(data, static_cast<int>(bytes.size()));
  std::string name;
  while (uint32_t tag = in.ReadTag()) {
    if (!LengthDelimited(tag, kModelGraph)) {
      if (!WireFormatLite::SkipField(&in, tag)) return false;
      continue;
    }
    uint32_t graph_size = 0;
    if (!in.ReadVarint32(&graph_size)) return false;
    auto graph_limit = in.PushLimit(static_cast<int>(graph_size));
    while (uint32_t g = in.ReadTag()) {
      if (!LengthDelimited(g, kGraphInitializer)) {
        if (!WireFormatLite::SkipField(&in, g)) return false;
        continue;
      }
      uint32_t size = 0;
      if (!in.ReadVarint32(&size) || size > bytes.size() - size_t(in.CurrentPosition()))
        return false;
      const uint8_t* start = data + in.CurrentPosition();
      if (!TensorName(start, static_cast<int>(size), &name)) return false;
      if (wanted.count(name) && !(*out)[name].ParseFromArray(start, static_cast<int>(size)))
        return false;
      if (!in.Skip(static_cast<int>(size))) return false;
    }
    if (!in.ConsumedEntireMessage()) return false;
    in.PopLimit(graph_limit);
  }
  return in.ConsumedEntireMessage();
}

// Reads an initializer's external data into its raw_data.
Status Embed(onnx::TensorProto* t, const std::string& dir) {
  if (t->data_location() != onnx::TensorProto::EXTERNAL) return Status::Ok();
  OP_ASSIGN_OR_RETURN(std::string bytes, ReadExternalData(*t, dir));
  t->clear_external_data();
  t->set_data_location(onnx::TensorProto::DEFAULT);
  t->set_raw_data(std::move(bytes));
  return Status::Ok();
}

}  // namespace

Expected<std::string> EmbedExternalData(const std::string& model_bytes,
                                        const std::string& model_dir) {
  onnx::ModelProto proto;
  if (model_bytes.size() >= size_t(INT_MAX) || !proto.ParseFromString(model_bytes))
    return Corrupt("a cut-out model does not parse");
  for (auto& t : *proto.mutable_graph()->mutable_initializer())
    OP_RETURN_IF_ERROR(Embed(&t, model_dir));
  return proto.SerializeAsString();
}

Expected<std::string> ExtractSubgraph(const Model& model, const SubgraphSpec& spec) {
  OP_RETURN_IF_ERROR(model.impl().RequireBytes());
  const GraphIndex& idx = model.index();
  std::set<std::string> wanted;
  for (int k : spec.nodes) {
    if (k < 0 || k >= static_cast<int>(idx.nodes().size())) continue;
    const NodeInfo& info = idx.nodes()[k];
    wanted.insert(info.inputs.begin(), info.inputs.end());
    wanted.insert(info.implicit_inputs.begin(), info.implicit_inputs.end());
  }
  // the indexed graph keeps every field but large weights' bytes: nodes, opsets and functions
  // come from it; the weights from the serialization, or from a full parse when the walk fails
  const onnx::ModelProto* full = &model.impl().proto;
  std::map<std::string, onnx::TensorProto> parsed;
  std::map<std::string, const onnx::TensorProto*> inits;
  if (InitializersFromBytes(model.impl().SerializedProto(), wanted, &parsed)) {
    for (const auto& [name, t] : parsed) inits[name] = &t;
  } else {
    full = model.impl().FullProto();
    if (full == nullptr) return Corrupt(model.path() + ": cannot re-read the model");
    for (const auto& t : full->graph().initializer()) inits[t.name()] = &t;
  }

  onnx::ModelProto out;
  out.set_ir_version(full->ir_version());
  out.set_producer_name("onnxprobe");
  out.set_producer_version("subgraph of " + model.path());
  *out.mutable_opset_import() = full->opset_import();
  *out.mutable_functions() = full->functions();
  auto* g = out.mutable_graph();
  g->set_name("onnxprobe_subgraph");

  std::set<std::string> available(spec.inputs.begin(), spec.inputs.end());
  for (size_t i = 0; i < spec.inputs.size(); ++i) {
    SetType(g->add_input(), spec.inputs[i], spec.input_types[i].first, spec.input_types[i].second);
  }
  // each alias right after its source exists (topological order in the file)
  auto emit_aliases = [&]() {
    for (const auto& [from, to] : spec.aliases) {
      if (!available.count(from) || available.count(to)) continue;
      onnx::NodeProto* id = g->add_node();
      id->set_op_type("Identity");
      id->set_name("onnxprobe_alias_" + to);
      id->add_input(from);
      id->add_output(to);
      available.insert(to);
    }
  };
  emit_aliases();
  std::vector<int> order = spec.nodes;
  std::sort(order.begin(), order.end());
  std::set<std::string> embedded;
  for (int k : order) {
    if (k < 0 || k >= static_cast<int>(idx.nodes().size()))
      return InvalidArgument("node index out of range");
    const NodeInfo& info = idx.nodes()[k];
    std::vector<std::string> reads = info.inputs;
    reads.insert(reads.end(), info.implicit_inputs.begin(), info.implicit_inputs.end());
    for (const auto& in : reads) {
      if (in.empty() || available.count(in)) continue;
      auto it = inits.find(in);
      if (it == inits.end()) {
        return InvalidArgument("node '" + info.name + "' (" + info.op_type + ") reads '" + in +
                               "', which the subgraph neither receives nor produces");
      }
      onnx::TensorProto* t = g->add_initializer();
      *t = *it->second;
      if (spec.weights == SubgraphWeights::kEmbedded) OP_RETURN_IF_ERROR(Embed(t, model.dir()));
      available.insert(in);
      embedded.insert(in);
    }
    onnx::NodeProto* copy = g->add_node();
    *copy = full->graph().node(info.file_index);
    for (const auto& fa : spec.float_attributes) {
      if (fa.node != k) continue;
      for (auto& a : *copy->mutable_attribute()) {
        if (a.name() == fa.name && a.type() == onnx::AttributeProto::FLOAT) a.set_f(fa.value);
      }
    }
    for (const auto& o : info.outputs) {
      if (!o.empty()) available.insert(o);
    }
    emit_aliases();
  }
  for (size_t i = 0; i < spec.outputs.size(); ++i) {
    if (!available.count(spec.outputs[i])) {
      return InvalidArgument("subgraph does not produce '" + spec.outputs[i] + "'");
    }
    if (i < spec.output_types.size()) {
      SetType(g->add_output(), spec.outputs[i], spec.output_types[i].first,
              spec.output_types[i].second);
    } else {
      g->add_output()->set_name(spec.outputs[i]);
    }
  }
  return out.SerializeAsString();
}

}  // namespace onnxprobe
