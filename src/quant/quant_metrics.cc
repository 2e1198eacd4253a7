#include "quant/quant_metrics.h"

#include <cmath>
#include <limits>

#include "onnxprobe/common/format.h"

namespace onnxprobe {
namespace {

// Elements per step of `axis` and the channel count, for per-channel parameters.
Status Layout(const Shape& s, const QuantParams& p, int* axis, int64_t* inner, int64_t* n) {
  *axis = -1, *inner = 1, *n = 1;
  if (!p.per_channel()) return Status::Ok();
  int ax = p.axis < 0 ? p.axis + static_cast<int>(s.size()) : p.axis;
  if (ax < 0 || ax >= static_cast<int>(s.size()) || s[ax] != static_cast<int64_t>(p.scale.size())) {
    return InvalidArgument("per-channel quantization with " + std::to_string(p.scale.size()) +
                           " scales along axis " + std::to_string(p.axis) +
                           " of a tensor of shape " + ShapeToString(s));
  }
  *axis = ax, *n = s[ax];
  for (size_t d = ax + 1; d < s.size(); ++d) *inner *= s[d];
  return Status::Ok();
}

}  // namespace

Expected<Tensor> Dequantize(const Tensor& q, const QuantParams& p) {
  if (IsFloating(q.dtype()) || q.dtype() == DType::kBool)
    return InvalidArgument(std::string("dequantizing a tensor of type ") + DTypeName(q.dtype()));
  int axis;
  int64_t inner, n;
  OP_RETURN_IF_ERROR(Layout(q.shape(), p, &axis, &inner, &n));
  OP_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(DType::kFloat32, q.shape()));
  float* o = out.data_as<float>();
  for (uint64_t i = 0; i < q.num_elements(); ++i) {
    size_t c = axis < 0 ? 0 : static_cast<size_t>((static_cast<int64_t>(i) / inner) % n);
    double zp = p.zero_point.empty() ? 0.0 : static_cast<double>(p.zero_point[c]);
    o[i] = static_cast<float>((ElementAsDouble(q, i) - zp) * static_cast<float>(p.scale[c]));
  }
  return out;
}

Expected<Tensor> Quantize(const Tensor& x, const QuantParams& p) {
  if (x.dtype() != DType::kFloat32)
    return InvalidArgument(std::string("quantizing a tensor of type ") + DTypeName(x.dtype()));
  int axis;
  int64_t inner, n;
  OP_RETURN_IF_ERROR(Layout(x.shape(), p, &axis, &inner, &n));
  OP_ASSIGN_OR_RETURN(Tensor out, Tensor::Allocate(p.qtype, x.shape()));
  const float* in = x.data_as<float>();
  for (uint64_t i = 0; i < x.num_elements(); ++i) {
    size_t c = axis < 0 ? 0 : static_cast<size_t>((static_cast<int64_t>(i) / inner) % n);
    // as ONNX Runtime: x / scale in float, rounded half to even, plus the zero point, saturated
    float v = std::nearbyint(in[i] / static_cast<float>(p.scale[c]));
    double q =
        static_cast<double>(v) + static_cast<double>(p.zero_point.empty() ? 0 : p.zero_point[c]);
    q = std::min(std::max(q, static_cast<double>(p.qmin)), static_cast<double>(p.qmax));
    switch (p.qtype) {
      case DType::kUInt8:
        out.data_as<uint8_t>()[i] = static_cast<uint8_t>(q);
        break;
      case DType::kInt8:
        out.data_as<int8_t>()[i] = static_cast<int8_t>(q);
        break;
      case DType::kUInt16:
        out.data_as<uint16_t>()[i] = static_cast<uint16_t>(q);
        break;
      case DType::kInt16:
        out.data_as<int16_t>()[i] = static_cast<int16_t>(q);
        break;
      case DType::kInt32:
        out.data_as<int32_t>()[i] = static_cast<int32_t>(q);
        break;
      default:
        return InvalidArgument(std::string("quantizing to ") + DTypeName(p.qtype));
    }
  }
  return out;
}

namespace quant {

double SqnrDb(double signal, double noise) {
  if (noise == 0) return std::numeric_limits<double>::infinity();
  if (signal == 0) return -std::numeric_limits<double>::infinity();
  return 10.0 * std::log10(signal / noise);
}

QuantRowMetrics MeasureRow(const Tensor& a, const Tensor& b, const QuantParams* p) {
  QuantRowMetrics m;
  if (a.shape() != b.shape() || a.num_elements() == 0) return m;
  int axis = -1;
  int64_t inner = 1, n = 1;
  if (p != nullptr && !Layout(a.shape(), *p, &axis, &inner, &n).ok()) p = nullptr;
  m.has_params = p != nullptr;
  m.per_channel = p != nullptr && p->per_channel();
  if (p != nullptr) m.scale = p->scale[0];
  const Shape& s = a.shape();
  int64_t c_inner = 1, c_n = s.size() >= 3 ? s[1] : 1;
  for (size_t d = 2; s.size() >= 3 && d < s.size(); ++d) c_inner *= s[d];
  std::vector<double> cs(c_n, 0), ce(c_n, 0);
  double sig = 0, noise = 0, sum_steps = 0, max_steps = 0;
  uint64_t sat = 0, finite = 0;
  for (uint64_t i = 0; i < a.num_elements(); ++i) {
    double x = ElementAsDouble(a, i), y = ElementAsDouble(b, i);
    if (!std::isfinite(x) || !std::isfinite(y)) continue;
    ++finite;
    double d = y - x;
    sig += x * x, noise += d * d;
    if (c_n > 1) {
      size_t c = static_cast<size_t>((static_cast<int64_t>(i) / c_inner) % c_n);
      cs[c] += x * x, ce[c] += d * d;
    }
    if (p == nullptr) continue;
    size_t c = axis < 0 ? 0 : static_cast<size_t>((static_cast<int64_t>(i) / inner) % n);
    double sc = p->scale[c], zp = p->zero_point.empty() ? 0.0 : double(p->zero_point[c]);
    if (sc <= 0) continue;
    double steps = std::fabs(d) / sc;
    sum_steps += steps;
    max_steps = std::max(max_steps, steps);
    double lo = (p->qmin - zp) * sc, hi = (p->qmax - zp) * sc;
    if (x < lo - sc / 2 || x > hi + sc / 2) ++sat;
  }
  m.sqnr_db = SqnrDb(sig, noise);
  if (p != nullptr && finite > 0) {
    m.max_steps = max_steps;
    m.mean_steps = sum_steps / finite;
    m.saturated = static_cast<double>(sat) / finite;
  }
  if (c_n > 1) {
    for (int64_t c = 0; c < c_n; ++c) m.channel_sqnr_db.push_back(SqnrDb(cs[c], ce[c]));
  }
  return m;
}

void JudgeQuantRow(const QuantRowMetrics& q, double min_sqnr_db, TensorResult* row) {
  const TensorMetrics& m = row->metrics;
  bool structural = m.shape_match && m.dtype_match && m.nonfinite_differ == 0;
  if (!structural) return;  // JudgeRow's verdict on shapes, dtypes and NaN/Inf stands
  row->within_tolerance = q.sqnr_db >= min_sqnr_db;
  row->tolerance_ratio =
      std::isinf(q.sqnr_db) && q.sqnr_db > 0 ? 0 : std::pow(10.0, (min_sqnr_db - q.sqnr_db) / 20.0);
  row->reason = row->within_tolerance ? ""
                                      : "SQNR " + FormatNumber(q.sqnr_db) + " dB < " +
                                            FormatNumber(min_sqnr_db) + " dB (quantization rule)";
  row->pass = row->within_tolerance || row->state == RowState::kAdvisory;
}

}  // namespace quant
void JudgeQuantizedPair(const Tensor& a, const Tensor& b, const TolerancePolicy& policy,
                        const CompareOptions& kernel, double min_sqnr_db, TensorResult* row) {
  JudgeRow(a, b, policy, kernel, row);
  quant::JudgeQuantRow(quant::MeasureRow(a, b, nullptr), min_sqnr_db, row);
}

}  // namespace onnxprobe
