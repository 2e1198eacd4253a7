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
  Emit e((node.name().empty() ? node.output(0) : node.name()) + "/exact/", out);
  auto cast = [&](const std::string& what, const std::string& in, int to,
                  const std::string& output = "") {
    std::string y = e.Node("Cast", what, {in}, output);
    e.IntAttr("to", to);
    return y;
  };
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
      shape = e.Ints("axis_shape", dims);
    }
  }
  auto along = [&](const std::string& what, const std::string& t) {
    return shape.empty() ? t : e.Node("Reshape", what, {t, shape});
  };
  const std::string s = along("scale", scale);
  const std::string z = zp.empty() ? "" : along("zero_point", cast("zero_point64", zp, kF64));
  if (dequantize) {
    std::string v = cast("x64", x, kF64);
    if (!z.empty()) v = e.Node("Sub", "centered", {v, z});
    e.Node("Mul", "scaled", {v, s}, node.output(0));
    return true;
  }
  std::string v = e.Node("Round", "rounded", {e.Node("Div", "quotient", {x, s})});
  if (!z.empty()) v = e.Node("Add", "shifted", {v, z});
  v = e.Node("Clip", "clipped", {v, e.Double("lo", lo), e.Double("hi", hi)});
  cast("cast", v, int_type, node.output(0));
  return true;
}

}  // namespace onnxprobe
