// OP005: float32/float64 constants that do not survive a float16 conversion (onnxconverter's
// convert_float_to_float16, a TensorRT/CUDA fp16 build): finite values beyond the float16 range
// (|x| > 65504, e.g. -1e9 or -3.4e38 attention masks) become +-inf, and a scalar below the
// smallest float16 subnormal (2^-24, e.g. an epsilon of 1e-12) becomes 0.
#include <cmath>

#include "lint/rules.h"
#include "tensor/tensor_proto_convert.h"

namespace onnxprobe::lint {
namespace {

constexpr double kFp16Max = 65504.0;
constexpr double kFp16MinSubnormal = 5.960464477539063e-08;  // 2^-24

struct Extremes {
  uint64_t overflow = 0;
  double max_abs = 0;
  double first_overflow = 0;
};

template <typename T>
Extremes Scan(const T* p, uint64_t n) {
  Extremes e;
  for (uint64_t i = 0; i < n; ++i) {
    double v = double(p[i]);
    double a = std::fabs(v);
    if (!std::isfinite(a)) continue;
    if (a > e.max_abs) e.max_abs = a;
    if (a > kFp16Max && e.overflow++ == 0) e.first_overflow = v;
  }
  return e;
}

void CheckTensor(const LintContext& ctx, const std::string& name, const Tensor& t,
                 const NodeInfo* owner, std::vector<LintFinding>* out) {
  Extremes e;
  if (t.dtype() == DType::kFloat32) {
    e = Scan(t.data_as<float>(), t.num_elements());
  } else if (t.dtype() == DType::kFloat64) {
    e = Scan(t.data_as<double>(), t.num_elements());
  } else {
    return;
  }
  const NodeInfo* at = owner;
  if (at == nullptr) {
    std::vector<int> users = ctx.Consumers(name);
    if (!users.empty()) at = &ctx.nodes()[users.front()];
  }
  std::string where = at == nullptr ? "" : " (read by " + NodeLabel(*at) + ")";
  if (e.overflow > 0) {
    LintFinding f = MakeFinding(LintSeverity::kWarning, at);
    f.tensor = name;
    f.message = "constant '" + name + "'" + where + " holds " + std::to_string(e.overflow) +
                " value(s) beyond the float16 range, e.g. " + Num(e.first_overflow) +
                " (largest |x| " + Num(e.max_abs) + ")";
    f.why =
        "in float16 they become +-inf: a -inf mask makes a fully masked Softmax row NaN, and inf "
        "times 0 or inf - inf poisons everything downstream";
    f.fix =
        "use a mask value float16 can hold (-1e4, or torch.finfo(dtype).min of the compute "
        "dtype), or keep this part of the graph in float32 (op_block_list/node_block_list of the "
        "fp16 converter)";
    out->push_back(std::move(f));
  }
  if (t.num_elements() == 1) {
    double a = std::fabs(ElementAsDouble(t, 0));
    if (a > 0 && a < kFp16MinSubnormal) {
      LintFinding f = MakeFinding(LintSeverity::kWarning, at);
      f.tensor = name;
      f.message = "scalar constant '" + name + "'" + where + " = " + Num(ElementAsDouble(t, 0)) +
                  " is below the smallest float16 value (2^-24 = 5.96e-08)";
      f.why =
          "in float16 it becomes 0: an epsilon added before Sqrt or a division stops protecting "
          "against division by zero";
      f.fix =
          "use an epsilon float16 can hold (>= 1e-7; LayerNorm/BatchNorm use 1e-5) or keep the "
          "normalization in float32";
      out->push_back(std::move(f));
    }
  }
}

}  // namespace

void CheckFp16HostileConstants(const LintContext& ctx, std::vector<LintFinding>* out) {
  for (const auto& t : ctx.proto().graph().initializer()) {
    if (t.data_type() != onnx::TensorProto::FLOAT && t.data_type() != onnx::TensorProto::DOUBLE)
      continue;
    auto v = ctx.ConstantValue(t.name());
    if (!v.ok()) {
      ctx.Note("OP005: " + v.status().message());
      continue;
    }
    CheckTensor(ctx, t.name(), *v, nullptr, out);
  }
  for (const NodeInfo& n : ctx.nodes()) {
    if (!(n.domain.empty() || n.domain == "ai.onnx") || n.outputs.empty()) continue;
    if (n.op_type == "Constant") {
      auto v = ctx.ConstantValue(n.outputs[0]);
      if (v.ok()) CheckTensor(ctx, n.outputs[0], *v, nullptr, out);
    } else if (n.op_type == "ConstantOfShape") {
      const auto* a = FindAttr(ctx.Proto(n), "value");
      if (a == nullptr || !a->has_t()) continue;
      auto v = TensorFromProto(a->t(), "ConstantOfShape " + NodeLabel(n) + " value");
      if (v.ok()) CheckTensor(ctx, n.outputs[0], *v, &n, out);
    }
  }
}

}  // namespace onnxprobe::lint
