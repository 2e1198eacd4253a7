// Quantize/Dequantize against the ONNX QuantizeLinear/DequantizeLinear definitions (values
// worked out by hand), and the row figures against hand-computed sums.
#include "quant/quant_metrics.h"

#include <gtest/gtest.h>

#include <cmath>

#include "onnxprobe/quant/quant.h"

namespace onnxprobe {
namespace {

Tensor Floats(Shape shape, std::vector<float> v) {
  auto t = Tensor::Allocate(DType::kFloat32, std::move(shape));
  EXPECT_TRUE(t.ok());
  for (size_t i = 0; i < v.size(); ++i) t->data_as<float>()[i] = v[i];
  return std::move(*t);
}

QuantParams U8(double scale, int64_t zp) {
  QuantParams p;
  p.scale = {scale};
  p.zero_point = {zp};
  p.qtype = DType::kUInt8;
  p.qmin = 0, p.qmax = 255;
  return p;
}

TEST(Quantize, RoundsHalfToEvenAndSaturates) {
  // x / 1 = 2.5 -> 2, 3.5 -> 4, -2.5 -> -2 (+ zp 10); 300 and -20 saturate at 255 and 0
  Tensor x = Floats({5}, {2.5f, 3.5f, -2.5f, 300.f, -20.f});
  auto q = Quantize(x, U8(1.0, 10));
  ASSERT_TRUE(q.ok());
  const uint8_t* d = q->data_as<uint8_t>();
  EXPECT_EQ(d[0], 12);
  EXPECT_EQ(d[1], 14);
  EXPECT_EQ(d[2], 8);
  EXPECT_EQ(d[3], 255);
  EXPECT_EQ(d[4], 0);
  auto back = Dequantize(*q, U8(1.0, 10));
  ASSERT_TRUE(back.ok());
  EXPECT_FLOAT_EQ(back->data_as<float>()[0], 2.f);
  EXPECT_FLOAT_EQ(back->data_as<float>()[3], 245.f);
  EXPECT_FLOAT_EQ(back->data_as<float>()[4], -10.f);
}

TEST(Quantize, PerChannelUsesTheAxis) {
  QuantParams p;
  p.scale = {0.5, 2.0};
  p.zero_point = {0, 0};
  p.qtype = DType::kInt8;
  p.qmin = -128, p.qmax = 127;
  p.axis = 0;
  Tensor x = Floats({2, 2}, {1.f, -1.f, 1.f, -5.f});
  auto q = Quantize(x, p);
  ASSERT_TRUE(q.ok());
  const int8_t* d = q->data_as<int8_t>();
  EXPECT_EQ(d[0], 2);   // 1 / 0.5
  EXPECT_EQ(d[1], -2);  // -1 / 0.5
  EXPECT_EQ(d[2], 0);   // 1 / 2 = 0.5 -> 0 (half to even)
  EXPECT_EQ(d[3], -2);  // -5 / 2 = -2.5 -> -2
  p.axis = 1;           // two scales along an axis of another size fail, naming the shape
  Tensor y = Floats({3, 2}, {0, 0, 0, 0, 0, 0});
  p.axis = 0;
  auto bad = Quantize(y, p);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("[3, 2]"), std::string::npos);
}

TEST(QuantRow, StepsSaturationAndSqnr) {
  // scale 0.5, zp 0, uint8: range [0, 127.5]; A = 1, 2, 200, -3; B = 1.5, 2, 127.5, 0
  Tensor a = Floats({4}, {1.f, 2.f, 200.f, -3.f});
  Tensor b = Floats({4}, {1.5f, 2.f, 127.5f, 0.f});
  QuantParams p = U8(0.5, 0);
  QuantRowMetrics m = quant::MeasureRow(a, b, &p);
  double signal = 1 + 4 + 40000 + 9, noise = 0.25 + 0 + 72.5 * 72.5 + 9;
  EXPECT_NEAR(m.sqnr_db, 10 * std::log10(signal / noise), 1e-9);
  EXPECT_DOUBLE_EQ(m.max_steps, 145.0);  // 72.5 / 0.5
  EXPECT_DOUBLE_EQ(m.mean_steps, (1 + 0 + 145 + 6) / 4.0);
  EXPECT_DOUBLE_EQ(m.saturated, 0.5);  // 200 above 127.75, -3 below -0.25
}

TEST(QuantRow, TheRuleJudgesBySqnr) {
  TensorResult row;
  row.metrics.shape_match = row.metrics.dtype_match = true;
  QuantRowMetrics q;
  q.sqnr_db = 14;
  quant::JudgeQuantRow(q, 20, &row);
  EXPECT_FALSE(row.pass);
  EXPECT_NEAR(row.tolerance_ratio, 2.0, 0.01);  // 10^(6/20): twice the allowed noise amplitude
  q.sqnr_db = 26;
  quant::JudgeQuantRow(q, 20, &row);
  EXPECT_TRUE(row.pass);
  EXPECT_NEAR(row.tolerance_ratio, 0.5, 0.01);
}

}  // namespace
}  // namespace onnxprobe
