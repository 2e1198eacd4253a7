// Mixed-precision conversion: every tensor lives in one or more precisions ("versions"), each
// under its own name; a node takes the version it needs, and a Cast (or a converted initializer)
// is made the first time a version is asked for. Names the outside world sees (graph inputs and
// outputs, tensors read by subgraph bodies) always name the original float32 version.
#include <set>
#include <unordered_map>

#include "graph/fp16_plan.h"
#include "model/model_impl.h"

namespace onnxprobe {
namespace {

constexpr int kFloat = onnx::TensorProto::FLOAT;
constexpr int kHalf = onnx::TensorProto::FLOAT16;

class Converter {
 public:
  Converter(const Model& model, const onnx::ModelProto& full, const TensorTypes& types)
      : model_(model), types_(types) {
    for (const auto& t : full.graph().initializer()) inits_[t.name()] = &t;
    for (const auto& v : full.graph().input()) taken_.insert(v.name());
    for (const auto& t : full.graph().initializer()) taken_.insert(t.name());
    for (const auto& n : full.graph().node()) {
      for (const auto& o : n.output()) taken_.insert(o);
      taken_.insert(n.name());
      // a float32 weight a Constant node holds (paddle2onnx, tf2onnx, spox) converts as an
      // initializer does; the node is kept only for readers that still take float32
      bool onnx_domain = n.domain().empty() || n.domain() == "ai.onnx";
      if (n.op_type() != "Constant" || !onnx_domain || n.input_size() != 0 || n.output_size() != 1)
        continue;
      for (const auto& a : n.attribute()) {
        if (a.name() == "value" && a.type() == onnx::AttributeProto::TENSOR &&
            a.t().data_type() == kFloat && a.t().data_location() != onnx::TensorProto::EXTERNAL)
          inits_[n.output(0)] = &a.t();
      }
    }
  }

  bool HoldsWeight(const onnx::NodeProto& n) const {
    return n.op_type() == "Constant" && n.output_size() == 1 && inits_.count(n.output(0)) > 0;
  }

  int Original(const std::string& name) const {
    auto it = types_.find(name);
    if (it != types_.end()) return DTypeToOnnx(it->second);
    auto in = inits_.find(name);
    return in == inits_.end() ? 0 : in->second->data_type();
  }

  std::string Unique(const std::string& base) {
    std::string n = base;
    for (int k = 1; taken_.count(n); ++k) n = base + "_" + std::to_string(k);
    taken_.insert(n);
    return n;
  }

  void Produce(const std::string& tensor, int type, const std::string& physical) {
    versions_[tensor][type] = physical;
  }

  // The name of `tensor` in precision `type`, made when missing. `exact` forces the new
  // version's name (the original name of a graph output or of a tensor a body reads).
  Expected<std::string> Get(const std::string& tensor, int type, const std::string& exact = "") {
    auto& v = versions_[tensor];
    auto have = v.find(type);
    if (have != v.end()) return have->second;
    if (v.empty()) {
      auto in = inits_.find(tensor);
      if (in == inits_.end()) return InvalidArgument("tensor '" + tensor + "' has no producer");
      if (type == kHalf && in->second->data_type() == kFloat && exact.empty()) {
        OP_ASSIGN_OR_RETURN(onnx::TensorProto h,
                            ToFp16Initializer(*in->second, Unique(tensor + "_fp16"), model_.dir()));
        v[kHalf] = h.name();
        new_inits_.push_back(std::move(h));
        return v[kHalf];
      }
      v[in->second->data_type()] = tensor;
      have = v.find(type);
      if (have != v.end()) return have->second;
    }
    const std::string& src = v.begin()->second;
    std::string out = exact.empty() ? Unique(tensor + (type == kHalf ? "_fp16" : "_fp32")) : exact;
    onnx::NodeProto cast;
    cast.set_op_type("Cast");
    cast.set_name(Unique(out + "_cast"));
    cast.add_input(src);
    cast.add_output(out);
    auto* to = cast.add_attribute();
    to->set_name("to");
    to->set_type(onnx::AttributeProto::INT);
    to->set_i(type);
    nodes_.push_back(std::move(cast));
    if (type == kHalf) half_produced_.insert(out);
    v[type] = out;
    return out;
  }

  std::vector<onnx::NodeProto> nodes_;
  std::vector<onnx::TensorProto> new_inits_;
  std::set<std::string> half_produced_;  // float16 tensors made by nodes

 private:
  const Model& model_;
  const TensorTypes& types_;
  std::unordered_map<std::string, const onnx::TensorProto*> inits_;
  std::set<std::string> taken_;
  std::unordered_map<std::string, std::map<int, std::string>> versions_;
};

}  // namespace

Expected<std::string> ConvertToFp16(const Model& model, const std::set<int>& keep_fp32,
                                    const TensorTypes& types, bool storage_barriers) {
  OP_RETURN_IF_ERROR(model.impl().RequireBytes());
  const onnx::ModelProto* full = model.impl().FullProto();
  if (full == nullptr) return Corrupt(model.path() + ": cannot re-read the model");
  const GraphIndex& idx = model.index();
  int64_t opset = DefaultOpset(*full);
  Converter cv(model, *full, types);

  // Names that must keep their original float32 meaning.
  std::set<std::string> fixed;
  for (const auto& o : full->graph().output()) fixed.insert(o.name());
  for (const auto& n : idx.nodes())
    fixed.insert(n.implicit_inputs.begin(), n.implicit_inputs.end());
  for (const auto& v : full->graph().input()) cv.Produce(v.name(), cv.Original(v.name()), v.name());

  std::vector<onnx::NodeProto> weights;  // Constant nodes holding float32 weights
  for (const NodeInfo& info : idx.nodes()) {
    onnx::NodeProto n = full->graph().node(info.file_index);
    if (cv.HoldsWeight(n)) {
      weights.push_back(std::move(n));
      continue;
    }
    Fp16NodePlan plan = PlanFp16Node(n, opset, types);
    bool convert =
        plan.eligibility == Fp16Eligibility::kConvertible && !keep_fp32.count(info.topo_index);
    for (const auto& x : info.implicit_inputs) {
      int t = cv.Original(x);
      if (t != 0) {
        OP_ASSIGN_OR_RETURN(std::string ignored, cv.Get(x, t, x));
      }
    }
    for (int i = 0; i < n.input_size(); ++i) {
      if (n.input(i).empty()) continue;
      int want = convert && plan.input_fp16[i] ? kHalf : cv.Original(n.input(i));
      if (want == 0) continue;  // type unknown: produced as-is under its own name
      OP_ASSIGN_OR_RETURN(std::string name, cv.Get(n.input(i), want));
      n.set_input(i, name);
    }
    for (int i = 0; i < n.output_size(); ++i) {
      const std::string& o = n.output(i);
      if (o.empty()) continue;
      if (convert && plan.output_fp16[i]) {
        std::string physical = fixed.count(o) ? cv.Unique(o + "_fp16") : o;
        cv.Produce(o, kHalf, physical);
        cv.half_produced_.insert(physical);
        n.set_output(i, physical);
      } else {
        cv.Produce(o, cv.Original(o), o);
      }
    }
    cv.nodes_.push_back(std::move(n));
  }
  for (const auto& o : full->graph().output()) {
    int t = cv.Original(o.name());
    if (t != 0) {
      OP_ASSIGN_OR_RETURN(std::string ignored, cv.Get(o.name(), t, o.name()));
    }
  }

  onnx::ModelProto out = *full;
  out.set_producer_name(kFp16ProducerName);
  auto* g = out.mutable_graph();
  g->clear_node();
  g->clear_value_info();
  std::set<std::string> read;
  for (const auto& n : cv.nodes_) read.insert(n.input().begin(), n.input().end());
  for (const auto& n : idx.nodes()) read.insert(n.implicit_inputs.begin(), n.implicit_inputs.end());
  for (const auto& o : full->graph().output()) read.insert(o.name());
  // a Constant weight some reader still takes in float32 stays (first: it has no inputs)
  for (auto& n : weights) {
    if (read.count(n.output(0))) *g->add_node() = std::move(n);
  }
  for (auto& n : cv.nodes_) {
    std::vector<std::pair<std::string, std::string>> barriers;  // stored name -> name read
    for (int i = 0; storage_barriers && i < n.output_size(); ++i) {
      if (!cv.half_produced_.count(n.output(i))) continue;
      std::string stored = cv.Unique(n.output(i) + "_stored");
      barriers.emplace_back(stored, n.output(i));
      n.set_output(i, stored);
    }
    *g->add_node() = std::move(n);
    for (const auto& [stored, name] : barriers) {  // two: see kFp16StorageNote
      std::string mid = cv.Unique(name + "_stored_mid");
      for (int k = 0; k < 2; ++k) {
        onnx::NodeProto* id = g->add_node();
        id->set_op_type("Identity");
        id->set_name(cv.Unique(name + "_barrier"));
        id->add_input(k ? mid : stored);
        id->add_output(k ? name : mid);
      }
    }
  }
  // float32 initializers every reader now takes in float16 are dropped (half the bytes).
  auto* inits = g->mutable_initializer();
  for (int i = inits->size() - 1; i >= 0; --i) {
    const std::string& name = inits->Get(i).name();
    bool graph_input = false;
    for (const auto& v : g->input()) graph_input |= v.name() == name;
    if (!read.count(name) && !graph_input) inits->DeleteSubrange(i, 1);
  }
  for (auto& t : *inits) {  // the converted model may be written anywhere: no side files
    if (t.data_location() != onnx::TensorProto::EXTERNAL) continue;
    OP_ASSIGN_OR_RETURN(std::string bytes, ReadExternalData(t, model.dir()));
    t.clear_external_data();
    t.set_data_location(onnx::TensorProto::DEFAULT);
    t.set_raw_data(std::move(bytes));
  }
  for (auto& t : cv.new_inits_) *g->add_initializer() = std::move(t);
  if (out.ByteSizeLong() > (size_t{2} << 30) - 1) {
    return Unsupported(model.path() + ": the converted model exceeds protobuf's 2 GB limit");
  }
  return out.SerializeAsString();
}

}  // namespace onnxprobe
