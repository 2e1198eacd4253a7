#include "fake_side.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

namespace onnxprobe::fake {
namespace {

// Protocol buffers wire format, just enough for a ModelProto: varints and length-delimited
// fields (field numbers from onnx.proto).
void Varint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void IntField(std::string* out, int field, uint64_t v) {
  Varint(out, static_cast<uint64_t>(field) << 3);
  Varint(out, v);
}

void BytesField(std::string* out, int field, const std::string& bytes) {
  Varint(out, (static_cast<uint64_t>(field) << 3) | 2);
  Varint(out, bytes.size());
  *out += bytes;
}

// ValueInfoProto {name = 1, type = 2 {tensor_type = 1 {elem_type = 1 (FLOAT)}}}
std::string FloatValueInfo(const std::string& name) {
  std::string tensor_type, type, vi;
  IntField(&tensor_type, 1, 1);
  BytesField(&type, 1, tensor_type);
  BytesField(&vi, 1, name);
  BytesField(&vi, 2, type);
  return vi;
}

}  // namespace

Tensor MakeF32(const Shape& shape, const std::vector<float>& values) {
  auto t = Tensor::Allocate(DType::kFloat32, shape);
  if (!t.ok() || t->num_elements() != values.size()) {
    ADD_FAILURE_AT(__FILE__, __LINE__);
    return Tensor();
  }
  std::memcpy(t->data(), values.data(), values.size() * sizeof(float));
  return std::move(*t);
}

Expected<Model> BuildModel(const std::string& path, const std::vector<GraphNode>& nodes,
                           const std::vector<std::string>& inputs,
                           const std::vector<std::string>& outputs) {
  std::string graph;
  for (const auto& n : nodes) {  // NodeProto {input = 1, output = 2, name = 3, op_type = 4}
    std::string np;
    for (const auto& x : n.inputs) BytesField(&np, 1, x);
    for (const auto& y : n.outputs) BytesField(&np, 2, y);
    BytesField(&np, 3, n.name);
    BytesField(&np, 4, n.op_type);
    BytesField(&graph, 1, np);
  }
  BytesField(&graph, 2, "fake");
  for (const auto& x : inputs) BytesField(&graph, 11, FloatValueInfo(x));
  for (const auto& y : outputs) BytesField(&graph, 12, FloatValueInfo(y));
  std::string opset, model;
  BytesField(&opset, 1, "");
  IntField(&opset, 2, 17);
  IntField(&model, 1, 8);  // ir_version
  BytesField(&model, 7, graph);
  BytesField(&model, 8, opset);
  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(model.data(), static_cast<std::streamsize>(model.size()));
    if (!f) return IoError("cannot write " + path);
  }
  return Model::Load(path);
}

FakeSide::FakeSide(std::string path) {
  info_.kind = SideKind::kDump;
  info_.path = std::move(path);
}

FakeSide& FakeSide::Add(const std::string& name, const std::string& node,
                        const std::string& op_type, Tensor value, bool is_graph_output) {
  SideTensor t;
  t.name = name;
  t.node = node;
  t.op_type = op_type;
  t.topo_index = static_cast<int>(tensors_.size());
  t.est_bytes = value.byte_size();
  t.is_graph_output = is_graph_output;
  tensors_.push_back(t);
  values_[name] = std::move(value);
  return *this;
}

FakeSide& FakeSide::AddSkipped(const std::string& name, const std::string& node,
                               const std::string& op_type, const std::string& reason) {
  SideTensor t;
  t.name = name;
  t.node = node;
  t.op_type = op_type;
  t.topo_index = static_cast<int>(tensors_.size());
  tensors_.push_back(t);
  skipped_[name] = reason;
  return *this;
}

void FakeSide::SetEstBytes(const std::string& name, uint64_t bytes) {
  for (auto& t : tensors_) {
    if (t.name == name) t.est_bytes = bytes;
  }
}

void FakeSide::FailOnFetch(size_t k, Status status) {
  fail_on_ = k;
  fail_status_ = std::move(status);
}

Expected<std::vector<RunOutput>> FakeSide::Fetch(const std::vector<std::string>& names) {
  ++fetches_;
  fetch_log_.push_back(names);
  if (fetches_ == fail_on_) return fail_status_;
  std::vector<RunOutput> out;
  for (const auto& n : names) {
    RunOutput o;
    o.name = n;
    auto s = skipped_.find(n);
    if (s != skipped_.end()) {
      o.skipped = {SkipKind::kUnsupportedType, s->second};
    } else {
      auto v = values_.find(n);
      if (v == values_.end()) return NotFound("fake side " + info_.path + " has no '" + n + "'");
      o.tensor = v->second;  // shares the buffer: the stored value stays
    }
    out.push_back(std::move(o));
  }
  ++runs_;
  fetched_tensors_ += names.size();
  return out;
}

}  // namespace onnxprobe::fake
