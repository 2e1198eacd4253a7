// Cuts nodes out of a model into a standalone model (single-node isolation, repro bundles).
#include <set>

#include "model/model_impl.h"
#include "onnxprobe/graph.h"

namespace onnxprobe {
namespace {

void SetType(onnx::ValueInfoProto* v, const std::string& name, DType dtype, const Shape& shape) {
  v->set_name(name);
  auto* tt = v->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(DTypeToOnnx(dtype));
  auto* sh = tt->mutable_shape();
  for (int64_t d : shape) sh->add_dim()->set_dim_value(d);
}

}  // namespace

Expected<std::string> ExtractSubgraph(const Model& model, const SubgraphSpec& spec) {
  OP_RETURN_IF_ERROR(model.impl().RequireBytes());
  const onnx::ModelProto* full = model.impl().FullProto();
  if (full == nullptr) return Corrupt(model.path() + ": cannot re-read the model");
  const GraphIndex& idx = model.index();
  std::map<std::string, const onnx::TensorProto*> inits;
  for (const auto& t : full->graph().initializer()) inits[t.name()] = &t;

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
      if (t->data_location() == onnx::TensorProto::EXTERNAL) {
        OP_ASSIGN_OR_RETURN(std::string bytes, ReadExternalData(*it->second, model.dir()));
        t->clear_external_data();
        t->set_data_location(onnx::TensorProto::DEFAULT);
        t->set_raw_data(std::move(bytes));
      }
      available.insert(in);
      embedded.insert(in);
    }
    *g->add_node() = full->graph().node(info.file_index);
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
