// Initializers too large to copy become graph inputs: what the runtime's optimized graph can be
// asked for without the runtime ever touching those weights (saving an optimized model copies
// every initializer it keeps).
#include <climits>

#include "graph/outputs_tail.h"
#include "model/model_impl.h"
#include "onnxprobe/graph/graph.h"
#include "onnxprobe/tensor/tensor.h"

namespace onnxprobe {
namespace {

bool Lifted(const onnx::TensorProto& t, uint64_t max_bytes) {
  if (max_bytes == 0 || t.data_location() != onnx::TensorProto::EXTERNAL) return false;
  auto dt = DTypeFromOnnx(t.data_type());
  auto n = NumElements(Shape(t.dims().begin(), t.dims().end()));
  return dt.ok() && n.ok() && *n * DTypeSize(*dt) > max_bytes;
}

}  // namespace

Expected<std::string> LiftExternalInitializers(const Model& model, uint64_t max_bytes,
                                               const std::vector<std::string>& outputs) {
  OP_RETURN_IF_ERROR(model.impl().RequireBytes());
  if (max_bytes == 0) return MarkOutputs(model, outputs);
  OP_ASSIGN_OR_RETURN(std::string tail, OutputsTail(model, outputs));
  // large embedded weights are external data of the .onnx file itself in these bytes: small
  const std::string& bytes = model.impl().SerializedProto();
  onnx::ModelProto proto;
  if (bytes.size() >= size_t(INT_MAX) || !proto.ParseFromString(bytes))
    return Corrupt(model.path() + ": the held model bytes no longer parse");
  auto* g = proto.mutable_graph();
  auto* kept = g->mutable_initializer();
  bool any = false;
  for (const auto& t : *kept) any = any || Lifted(t, max_bytes);
  if (!any) return MarkOutputs(model, outputs);
  for (int i = 0; i < kept->size();) {
    const onnx::TensorProto& t = kept->Get(i);
    if (!Lifted(t, max_bytes)) {
      ++i;
      continue;
    }
    bool declared = false;
    for (const auto& in : g->input()) declared = declared || in.name() == t.name();
    if (!declared) {
      auto* in = g->add_input();
      in->set_name(t.name());
      auto* tt = in->mutable_type()->mutable_tensor_type();
      tt->set_elem_type(t.data_type());
      for (int64_t d : t.dims()) tt->mutable_shape()->add_dim()->set_dim_value(d);
    }
    kept->DeleteSubrange(i, 1);
  }
  std::string out;
  out.reserve(proto.ByteSizeLong() + tail.size());
  proto.AppendToString(&out);
  out.append(tail);
  return out;
}

}  // namespace onnxprobe
