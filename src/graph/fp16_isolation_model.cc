// Many single nodes in float16 in one model, so one session and one run isolate them all. Each
// node reads the original tensors as graph inputs (fed from a float32 run), cast once per tensor
// and shared by every node that reads it; its outputs are renamed per node and cast back.
#include <set>
#include <unordered_map>

#include "graph/fp16_plan.h"
#include "model/model_impl.h"

namespace onnxprobe {
namespace {

void TypeOnly(onnx::ValueInfoProto* v, const std::string& name, int elem_type) {
  v->set_name(name);
  v->mutable_type()->mutable_tensor_type()->set_elem_type(elem_type);
}

// Two Identities (kFp16StorageNote): the runtime runs a single one between two nodes it computes
// in float32 in float32 too.
void AddBarrier(onnx::GraphProto* g, const std::string& in, const std::string& out) {
  for (int k = 0; k < 2; ++k) {
    onnx::NodeProto* n = g->add_node();
    n->set_op_type("Identity");
    n->set_name(out + (k ? "_barrier_b" : "_barrier_a"));
    n->add_input(k ? out + "_mid" : in);
    n->add_output(k ? out : out + "_mid");
  }
}

onnx::NodeProto MakeCast(const std::string& in, const std::string& out, int to) {
  onnx::NodeProto cast;
  cast.set_op_type("Cast");
  cast.set_name(out + "_cast");
  cast.add_input(in);
  cast.add_output(out);
  auto* a = cast.add_attribute();
  a->set_name("to");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(to);
  return cast;
}

// Node k once more in float32, reading its float16-rounded inputs cast back to float32 (one cast
// per tensor, shared) and rounding each float output to float16 once: Fp16IsolationModel::storage.
template <typename TypeOf>
Status AddStorageCopy(const onnx::NodeProto& original, const Fp16NodePlan& plan, int k,
                      const std::unordered_map<std::string, std::string>& half, onnx::GraphProto* g,
                      std::set<std::string>* wide, std::vector<Fp16IsolationModel::Output>* storage,
                      TypeOf type_of) {
  onnx::NodeProto n = original;
  std::string tag = "s" + std::to_string(k) + "_";
  for (int i = 0; i < n.input_size(); ++i) {
    if (n.input(i).empty() || !plan.input_fp16[i]) continue;
    auto h = half.find(n.input(i));
    if (h == half.end()) return InvalidArgument("no float16 copy of '" + n.input(i) + "'");
    std::string f = h->second + "_f32";
    if (wide->insert(f).second) *g->add_node() = MakeCast(h->second, f, onnx::TensorProto::FLOAT);
    n.set_input(i, f);
  }
  n.set_name(tag + n.name());
  std::vector<std::pair<std::string, std::string>> rounded;  // float32 output -> graph output
  for (int i = 0; i < n.output_size(); ++i) {
    if (n.output(i).empty()) continue;
    const std::string original_name = n.output(i);
    std::string renamed = tag + std::to_string(i) + "_" + original_name;
    n.set_output(i, renamed);
    int t = type_of(original_name);
    if (t == 0 || !plan.output_fp16[i]) continue;  // only float outputs are rounded
    std::string graph_output = renamed + "_r";
    rounded.emplace_back(renamed, graph_output);
    TypeOnly(g->add_output(), graph_output, t);
    storage->push_back({graph_output, original_name, k});
  }
  *g->add_node() = std::move(n);
  for (const auto& [f, out] : rounded) {
    *g->add_node() = MakeCast(f, f + "_h", onnx::TensorProto::FLOAT16);
    AddBarrier(g, f + "_h", f + "_hs");
    *g->add_node() = MakeCast(f + "_hs", out, onnx::TensorProto::FLOAT);
  }
  return Status::Ok();
}

}  // namespace

std::vector<Fp16Eligibility> Fp16EligibilityOf(const Model& model, const TensorTypes& types) {
  std::vector<Fp16Eligibility> out;
  const onnx::ModelProto& proto = model.impl().proto;
  int64_t opset = DefaultOpset(proto);
  for (const NodeInfo& info : model.index().nodes()) {
    out.push_back(PlanFp16Node(proto.graph().node(info.file_index), opset, types).eligibility);
  }
  return out;
}

Expected<Fp16IsolationModel> BuildFp16IsolationModel(const Model& model,
                                                     const std::vector<int>& nodes,
                                                     const TensorTypes& types, bool embed) {
  OP_RETURN_IF_ERROR(model.impl().RequireBytes());
  const onnx::ModelProto* full = model.impl().FullProto();
  if (full == nullptr) return Corrupt(model.path() + ": cannot re-read the model");
  const GraphIndex& idx = model.index();
  int64_t opset = DefaultOpset(*full);
  std::unordered_map<std::string, const onnx::TensorProto*> inits;
  for (const auto& t : full->graph().initializer()) inits[t.name()] = &t;

  Fp16IsolationModel result;
  onnx::ModelProto out;
  std::set<std::string> fed, copied;
  if (embed) {  // the original graph, every node output an output, plus the single nodes
    out = *full;
    auto* g = out.mutable_graph();
    std::set<std::string> outputs, inits_and_inputs;
    for (const auto& o : g->output()) outputs.insert(o.name());
    for (const auto& t : g->initializer()) copied.insert(t.name());
    for (const auto& v : g->input()) {
      if (!copied.count(v.name())) result.feeds.push_back(v.name());
      fed.insert(v.name());
    }
    for (const std::string& name : idx.CapturableTensors()) {
      if (!outputs.count(name)) g->add_output()->set_name(name);
      result.captured.push_back(name);
    }
    for (const NodeInfo& n : idx.nodes()) fed.insert(n.outputs.begin(), n.outputs.end());
  }
  out.set_ir_version(full->ir_version());
  out.set_producer_name("onnxprobe");
  out.set_producer_version("float16 isolation of " + model.path());
  *out.mutable_opset_import() = full->opset_import();
  *out.mutable_functions() = full->functions();
  auto* g = out.mutable_graph();
  g->set_name("onnxprobe_fp16_isolation");

  std::unordered_map<std::string, std::string> half;  // original tensor -> its float16 name
  std::set<std::string> wide;  // float16 tensors already cast back to float32 (storage copies)
  auto type_of = [&](const std::string& name) {
    auto it = types.find(name);
    if (it != types.end()) return DTypeToOnnx(it->second);
    auto in = inits.find(name);
    return in == inits.end() ? 0 : in->second->data_type();
  };
  auto plain = [&](const std::string& x) -> Status {
    if (embed && !inits.count(x)) return Status::Ok();  // produced by the original graph
    if (inits.count(x)) {
      if (copied.insert(x).second) {
        onnx::TensorProto* t = g->add_initializer();
        *t = *inits[x];
        if (t->data_location() == onnx::TensorProto::EXTERNAL) {
          OP_ASSIGN_OR_RETURN(std::string bytes, ReadExternalData(*inits[x], model.dir()));
          t->clear_external_data();
          t->set_data_location(onnx::TensorProto::DEFAULT);
          t->set_raw_data(std::move(bytes));
        }
      }
      return Status::Ok();
    }
    if (type_of(x) == 0) return InvalidArgument("the type of tensor '" + x + "' is not known");
    if (fed.insert(x).second) {
      TypeOnly(g->add_input(), x, type_of(x));
      result.feeds.push_back(x);
    }
    return Status::Ok();
  };
  for (int k : nodes) {
    if (k < 0 || k >= static_cast<int>(idx.nodes().size()))
      return InvalidArgument("node index out of range");
    const NodeInfo& info = idx.nodes()[k];
    onnx::NodeProto n = full->graph().node(info.file_index);
    Fp16NodePlan plan = PlanFp16Node(n, opset, types);
    if (plan.eligibility != Fp16Eligibility::kConvertible) {
      return InvalidArgument("node '" + info.name + "' (" + info.op_type +
                             ") cannot run in float16: " + Fp16EligibilityName(plan.eligibility));
    }
    std::string tag = "n" + std::to_string(k) + "_";
    for (int i = 0; i < n.input_size(); ++i) {
      const std::string x = n.input(i);
      if (x.empty()) continue;
      if (!plan.input_fp16[i]) {
        OP_RETURN_IF_ERROR(plain(x));
        continue;
      }
      auto h = half.find(x);
      if (h == half.end()) {
        std::string name = "h_" + std::to_string(half.size()) + "_" + x;
        if (inits.count(x)) {
          OP_ASSIGN_OR_RETURN(onnx::TensorProto t, ToFp16Initializer(*inits[x], name, model.dir()));
          *g->add_initializer() = std::move(t);
        } else {
          OP_RETURN_IF_ERROR(plain(x));
          *g->add_node() = MakeCast(x, name + "_pre", onnx::TensorProto::FLOAT16);
          AddBarrier(g, name + "_pre", name);
        }
        h = half.emplace(x, name).first;
      }
      n.set_input(i, h->second);
    }
    n.set_name(tag + n.name());
    std::vector<std::pair<std::string, std::string>> back;  // float16 output -> graph output
    for (int i = 0; i < n.output_size(); ++i) {
      if (n.output(i).empty()) continue;
      const std::string original = n.output(i);
      std::string renamed = tag + std::to_string(i) + "_" + original;
      n.set_output(i, renamed);
      int t = type_of(original);
      if (t == 0) continue;  // not captured: nothing to compare it with
      std::string graph_output = renamed;
      if (plan.output_fp16[i]) {
        graph_output = renamed + "_f32";
        back.emplace_back(renamed, graph_output);
      }
      TypeOnly(g->add_output(), graph_output, t);
      result.outputs.push_back({graph_output, original, k});
    }
    *g->add_node() = std::move(n);
    for (const auto& [h, f] : back) {
      AddBarrier(g, h, h + "_st");
      *g->add_node() = MakeCast(h + "_st", f, onnx::TensorProto::FLOAT);
    }
    OP_RETURN_IF_ERROR(AddStorageCopy(full->graph().node(info.file_index), plan, k, half, g, &wide,
                                      &result.storage, type_of));
  }
  result.bytes = out.SerializeAsString();
  return result;
}

}  // namespace onnxprobe
