// A Conv as an im2col and a float64 MatMul (ConvAsMatMul, exact_conv.h).
#include "graph/exact_conv.h"

#include <cstdint>
#include <limits>

namespace onnxprobe {

Emit::Emit(const std::string& prefix, std::vector<onnx::NodeProto>* out) : p_(prefix), out_(out) {}

std::string Emit::Node(const std::string& op, const std::string& what,
                       const std::vector<std::string>& inputs, const std::string& output) {
  onnx::NodeProto n;
  n.set_op_type(op);
  n.set_name(p_ + what);
  for (const auto& i : inputs) n.add_input(i);
  std::string o = output.empty() ? p_ + what : output;
  n.add_output(o);
  out_->push_back(std::move(n));
  return o;
}

void Emit::IntAttr(const std::string& name, int64_t v) {
  auto* a = out_->back().add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void Emit::IntsAttr(const std::string& name, const std::vector<int64_t>& v) {
  auto* a = out_->back().add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

onnx::TensorProto* Emit::ConstantNode(const std::string& what, std::string* output) {
  *output = Node("Constant", what, {});
  auto* a = out_->back().add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto::TENSOR);
  return a->mutable_t();
}

std::string Emit::Ints(const std::string& what, const std::vector<int64_t>& v) {
  std::string o;
  onnx::TensorProto* t = ConstantNode(what, &o);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(v.size()));
  for (int64_t x : v) t->add_int64_data(x);
  return o;
}

std::string Emit::Double(const std::string& what, double v) {
  std::string o;
  onnx::TensorProto* t = ConstantNode(what, &o);
  t->set_data_type(onnx::TensorProto::DOUBLE);
  t->add_double_data(v);
  return o;
}

namespace {

std::vector<int64_t> Ints(const onnx::NodeProto& n, const std::string& name,
                          std::vector<int64_t> fallback) {
  for (const auto& a : n.attribute())
    if (a.name() == name) return {a.ints().begin(), a.ints().end()};
  return fallback;
}

}  // namespace

bool ConvAsMatMul(const onnx::NodeProto& conv, const ShapeTable& shapes, int64_t opset,
                  std::vector<onnx::NodeProto>* out, std::string* why) {
  if (opset < 11) {
    *why = "opset " + std::to_string(opset) + " (the float64 Conv needs 11 or newer)";
    return false;
  }
  if (conv.input_size() < 2 || conv.output_size() < 1) {
    *why = "a Conv without a weight";
    return false;
  }
  const std::string& x = conv.input(0);
  const std::string& w = conv.input(1);
  auto ws = shapes.find(w);
  if (ws == shapes.end() || !ws->second.rank_known || ws->second.dims.size() < 3) {
    *why = "the shape of its weight " + w + " is not known before running";
    return false;
  }
  const std::vector<int64_t>& wd = ws->second.dims;
  for (int64_t d : wd) {
    if (d <= 0) {
      *why = "the shape of its weight " + w + " is not known before running";
      return false;
    }
  }
  const size_t r = wd.size() - 2;
  int64_t groups = 1;
  std::string auto_pad = "NOTSET";
  for (const auto& a : conv.attribute()) {
    if (a.name() == "group") groups = a.i();
    if (a.name() == "auto_pad") auto_pad = a.s();
  }
  std::vector<int64_t> strides = Ints(conv, "strides", std::vector<int64_t>(r, 1));
  std::vector<int64_t> dil = Ints(conv, "dilations", std::vector<int64_t>(r, 1));
  std::vector<int64_t> pads = Ints(conv, "pads", std::vector<int64_t>(2 * r, 0));
  const int64_t m = wd[0], cg = wd[1];
  if (groups < 1 || m % groups != 0 || strides.size() != r || dil.size() != r ||
      pads.size() != 2 * r) {
    *why = "attributes that do not fit its weight's shape";
    return false;
  }
  if (auto_pad == "VALID") pads.assign(2 * r, 0);
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    auto xs = shapes.find(x);
    for (size_t j = 0; j < r; ++j) {
      int64_t in =
          xs == shapes.end() || xs->second.dims.size() != r + 2 ? -1 : xs->second.dims[2 + j];
      if (in <= 0) {
        *why = "auto_pad " + auto_pad + " with an input of spatial size unknown before running";
        return false;
      }
      int64_t o = (in + strides[j] - 1) / strides[j];
      int64_t total =
          std::max<int64_t>((o - 1) * strides[j] + (wd[2 + j] - 1) * dil[j] + 1 - in, 0);
      int64_t small = total / 2;
      pads[j] = auto_pad == "SAME_UPPER" ? small : total - small;
      pads[r + j] = total - pads[j];
    }
  }
  const std::string name = conv.name().empty() ? conv.output(0) : conv.name();
  Emit e(name + "/exact/", out);
  std::string xp = x;
  bool padded = false;
  for (int64_t p : pads) padded = padded || p != 0;
  if (padded) {
    std::vector<int64_t> full(2 * (r + 2), 0);
    for (size_t j = 0; j < r; ++j) {
      full[2 + j] = pads[j];
      full[r + 2 + 2 + j] = pads[r + j];
    }
    xp = e.Node("Pad", "padded", {x, e.Ints("pads", full)});
  }
  int64_t k = 1;
  for (size_t j = 0; j < r; ++j) k *= wd[2 + j];
  bool unit_strides = true;
  for (int64_t s : strides) unit_strides = unit_strides && s == 1;
  std::vector<int64_t> axes(r);
  for (size_t j = 0; j < r; ++j) axes[j] = static_cast<int64_t>(2 + j);
  std::string axes_t = e.Ints("axes", axes), steps_t = e.Ints("steps", strides);
  std::string by_group = e.Ints("by_group", {0, groups, cg, -1});
  std::vector<std::string> cols;
  std::string first;
  std::vector<int64_t> pos(r, 0);  // the kernel position, row-major like the weight's
  for (int64_t i = 0; i < k; ++i) {
    std::string tag = std::to_string(i);
    std::string slice = xp;
    if (k > 1 || !unit_strides) {
      std::vector<int64_t> starts(r), ends(r);
      for (size_t j = 0; j < r; ++j) {
        int64_t last = wd[2 + j] - 1;
        starts[j] = pos[j] * dil[j];
        // a negative end counts from the padded input's end: every position yields the output's
        // length, floor((in - (k - 1) * d - 1) / s) + 1, whatever the input's size
        ends[j] = pos[j] == last ? std::numeric_limits<int64_t>::max() : -(last - pos[j]) * dil[j];
      }
      slice = e.Node(
          "Slice", "slice/" + tag,
          {xp, e.Ints("starts/" + tag, starts), e.Ints("ends/" + tag, ends), axes_t, steps_t});
    }
    if (first.empty()) first = slice;
    cols.push_back(e.Node("Reshape", "col/" + tag, {slice, by_group}));
    for (size_t j = r; j-- > 0;) {
      if (++pos[j] < wd[2 + j]) break;
      pos[j] = 0;
    }
  }
  std::string im2col = cols[0];
  if (cols.size() > 1) {
    im2col = e.Node("Concat", "im2col", cols);
    e.IntAttr("axis", 2);
  }
  std::string w3 = e.Node("Reshape", "w/mck", {w, e.Ints("w/mck/shape", {m, cg, k})});
  std::string wt = e.Node("Transpose", "w/mkc", {w3});
  e.IntsAttr("perm", {0, 2, 1});
  std::string wg =
      e.Node("Reshape", "w/grouped", {wt, e.Ints("w/grouped/shape", {groups, m / groups, k * cg})});
  std::string y = e.Node("MatMul", "matmul", {wg, im2col});
  std::string shape = e.Node("Shape", "spatial/shape", {first});
  std::string spatial = e.Node("Slice", "spatial",
                               {shape, e.Ints("spatial/starts", {2}),
                                e.Ints("spatial/ends", {std::numeric_limits<int64_t>::max()})});
  std::string out_shape = e.Node("Concat", "out/shape", {e.Ints("out/nm", {0, m}), spatial});
  e.IntAttr("axis", 0);
  bool bias = conv.input_size() > 2 && !conv.input(2).empty();
  std::string result = e.Node("Reshape", "out", {y, out_shape}, bias ? "" : conv.output(0));
  if (bias) {
    std::vector<int64_t> bshape(r + 1, 1);
    bshape[0] = m;
    std::string b = e.Node("Reshape", "bias", {conv.input(2), e.Ints("bias/shape", bshape)});
    e.Node("Add", "add_bias", {result, b}, conv.output(0));
  }
  return true;
}

}  // namespace onnxprobe
