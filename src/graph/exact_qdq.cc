// QuantizeLinear/DequantizeLinear in float64 ops (exact_qdq.h).
#include "graph/exact_qdq.h"

#include <cstdint>
#include <limits>

namespace onnxprobe {
namespace {

constexpr int kF64 = onnx::TensorProto::DOUBLE;

// The integer types these nodes read or write that Cast takes to and from float64, with range.
bool IntRange(int t, double* lo, double* hi) {
  switch (t) {
    case onnx::TensorProto::INT8:
      *lo = std::numeric_limits<int8_t>::min(), *hi = std::numeric_limits<int8_t>::max();
      return true;
    case onnx::TensorProto::UINT8:
      *lo = 0, *hi = std::numeric_limits<uint8_t>::max();
      return true;
    case onnx::TensorProto::INT16:
      *lo = std::numeric_limits<int16_t>::min(), *hi = std::numeric_limits<int16_t>::max();
      return true;
    case onnx::TensorProto::UINT16:
      *lo = 0, *hi = std::numeric_limits<uint16_t>::max();
      return true;
    case onnx::TensorProto::INT32:
      *lo = std::numeric_limits<int32_t>::min(), *hi = std::numeric_limits<int32_t>::max();
      return true;
    default:
      return false;
  }
}

class Emitter {
 public:
  Emitter(const std::string& base, std::vector<onnx::NodeProto>* out) : base_(base), out_(out) {}

  // A node of `op` reading `in` and writing `result` (a fresh name when empty).
  std::string Node(const std::string& op, const std::vector<std::string>& in,
                   std::string result = "") {
    if (result.empty()) result = base_ + "/exact/" + std::to_string(count_) + "_" + op;
    onnx::NodeProto n;
    n.set_op_type(op);
    n.set_name(base_ + "/exact/" + std::to_string(count_++) + "_" + op + "_node");
    for (const auto& x : in) n.add_input(x);
    n.add_output(result);
    out_->push_back(std::move(n));
    return result;
  }
  std::string Cast(const std::string& in, int to, std::string result = "") {
    std::string y = Node("Cast", {in}, std::move(result));
    auto* a = out_->back().add_attribute();
    a->set_name("to");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(to);
    return y;
  }
  template <typename T>
  std::string Constant(int type, const std::vector<int64_t>& dims, const std::vector<T>& values) {
    std::string y = Node("Constant", {});
    auto* a = out_->back().add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    onnx::TensorProto* t = a->mutable_t();
    t->set_data_type(type);
    for (int64_t d : dims) t->add_dims(d);
    for (T v : values) {
      if constexpr (std::is_same_v<T, double>) {
        t->add_double_data(v);
      } else {
        t->add_int64_data(v);
      }
    }
    return y;
  }

 private:
  std::string base_;
  std::vector<onnx::NodeProto>* out_;
  int count_ = 0;
};

}  // namespace

bool QdqAsFloat64(const onnx::NodeProto& node, const ShapeTable& shapes,
                  std::vector<onnx::NodeProto>* out, std::string* why) {
  const bool dequantize = node.op_type() == "DequantizeLinear";
  if (node.input_size() < 2 || node.output_size() < 1) {
    *why = node.op_type() + " without a scale";
    return false;
  }
  int64_t axis = 1;
  int output_dtype = 0;
  for (const auto& a : node.attribute()) {
    if (a.name() == "axis") axis = a.i();
    if (a.name() == "block_size" && a.i() != 0) {
      *why = "blocked quantization (block_size)";
      return false;
    }
    if (a.name() == "output_dtype") output_dtype = static_cast<int>(a.i());
  }
  auto find = [&](const std::string& name) -> const TypedShape* {
    auto it = shapes.find(name);
    return it == shapes.end() ? nullptr : &it->second;
  };
  const std::string& x = node.input(0);
  const std::string& scale = node.input(1);
  const std::string zp = node.input_size() > 2 ? node.input(2) : "";
  const TypedShape* xs = find(x);
  const TypedShape* ss = find(scale);
  const TypedShape* zs = zp.empty() ? nullptr : find(zp);
  double lo = 0, hi = 0;
  int int_type = dequantize          ? (xs ? xs->elem_type : 0)
                 : zs                ? zs->elem_type
                 : output_dtype != 0 ? output_dtype
                                     : static_cast<int>(onnx::TensorProto::UINT8);
  if (!IntRange(int_type, &lo, &hi) || (!dequantize && int_type == onnx::TensorProto::INT32) ||
      (zs != nullptr && !IntRange(zs->elem_type, &lo, &hi))) {
    *why = "an integer type Cast does not take to float64 exactly (4-bit, float8, or unknown)";
    return false;
  }
  if (ss == nullptr || !ss->rank_known) {
    *why = "a scale of unknown rank";
    return false;
  }
  Emitter e(node.name().empty() ? node.output(0) : node.name(), out);
  // a per-axis scale (1-D) broadcasts along `axis` of an input of known rank
  std::string shape;
  if (ss->dims.size() == 1) {
    if (xs == nullptr || !xs->rank_known) {
      *why = "a per-axis scale on an input of unknown rank";
      return false;
    }
    int64_t rank = static_cast<int64_t>(xs->dims.size());
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) {
      *why = "axis outside the input's rank";
      return false;
    }
    if (rank > 1) {
      std::vector<int64_t> dims(rank, 1);
      dims[axis] = -1;
      shape = e.Constant<int64_t>(onnx::TensorProto::INT64, {rank}, dims);
    }
  }
  auto along = [&](const std::string& t) {
    return shape.empty() ? t : e.Node("Reshape", {t, shape});
  };
  const std::string s = along(scale);
  const std::string z = zp.empty() ? "" : along(e.Cast(zp, kF64));
  if (dequantize) {
    std::string v = e.Cast(x, kF64);
    if (!z.empty()) v = e.Node("Sub", {v, z});
    e.Node("Mul", {v, s}, node.output(0));
    return true;
  }
  std::string v = e.Node("Round", {e.Node("Div", {x, s})});
  if (!z.empty()) v = e.Node("Add", {v, z});
  v = e.Node("Clip", {v, e.Constant<double>(kF64, {}, {lo}), e.Constant<double>(kF64, {}, {hi})});
  e.Cast(v, int_type, node.output(0));
  return true;
}

}  // namespace onnxprobe
