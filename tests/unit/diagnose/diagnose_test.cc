// Diagnosis's pure parts: the quantized-range figures against sums worked out here, the shell
// quoting of fixes against POSIX rules, and the knowledge file's refusal of foreign files.
#include "onnxprobe/diagnose/diagnose.h"

#include <gtest/gtest.h>

#include <cmath>
#include <fstream>

#include "common/file_util.h"

namespace onnxprobe {
namespace {

Tensor Floats(Shape shape, const std::vector<float>& v) {
  auto t = Tensor::Allocate(DType::kFloat32, std::move(shape));
  EXPECT_TRUE(t.ok());
  for (size_t i = 0; i < v.size(); ++i) t->data_as<float>()[i] = v[i];
  return std::move(*t);
}

TEST(TensorQuantization, ClippingAgainstTheRangeBRepresents) {
  // 100 values 0.1 .. 10.0; B represents [0, 2.55] (uint8, scale 0.01, zero point 0)
  std::vector<float> v;
  for (int i = 1; i <= 100; ++i) v.push_back(0.1f * static_cast<float>(i));
  QuantParams p;
  p.scale = {0.01};
  p.zero_point = {0};
  TensorQuantization q = MeasureTensorQuantization(Floats({100}, v), p);
  ASSERT_TRUE(q.measured);
  EXPECT_DOUBLE_EQ(q.lo_b, 0.0);
  EXPECT_NEAR(q.hi_b, 2.55, 1e-12);
  EXPECT_NEAR(q.lo_a, 0.1, 1e-6);
  EXPECT_NEAR(q.hi_a, 10.0, 1e-5);
  // beyond 2.55 + half a step: 2.6 .. 10.0, 75 of 100 values
  EXPECT_NEAR(q.saturated, 0.75, 1e-12);
  // clipped to 2.55: noise sum (x - 2.55)^2 over the 75, signal sum x^2 over all 100
  double sig = 0, noise = 0;
  for (float x : v) {
    sig += double(x) * x;
    if (x > 2.555) noise += (x - 2.55) * (x - 2.55);
  }
  EXPECT_NEAR(q.sqnr_db, 10 * std::log10(sig / noise), 0.05);  // plus rounding noise below
  // MinMax over [0, 10]: steps of 10/255, no clipping: far better
  EXPECT_GT(q.minmax_db, q.sqnr_db + 20);
  EXPECT_GT(q.percentile_db, q.sqnr_db);
}

TEST(TensorQuantization, NothingToMeasure) {
  QuantParams p;  // no scale
  EXPECT_FALSE(MeasureTensorQuantization(Floats({2}, {1, 2}), p).measured);
  p.scale = {1};
  p.zero_point = {0};
  EXPECT_FALSE(MeasureTensorQuantization(Floats({2}, {NAN, INFINITY}), p).measured);
}

TEST(ShellJoin, QuotesWhatAShellWouldSplitOrExpand) {
  EXPECT_EQ(ShellJoin({"onnxprobe", "--b-opt-level", "basic"}), "onnxprobe --b-opt-level basic");
  EXPECT_EQ(ShellJoin({"k=a;b"}), "'k=a;b'");
  EXPECT_EQ(ShellJoin({"it's", "$HOME", ""}), "'it'\\''s' '$HOME' ''");
  EXPECT_EQ(ShellJoin({"/tmp/x y.onnx"}), "'/tmp/x y.onnx'");
}

TEST(KnowledgeFile, AForeignFileIsRefusedAndAMissingOneIsFine) {
  std::string dir = *MakeTemporaryFolder("onnxprobe-knowledge-test");
  std::string missing = dir + "/none.json", foreign = dir + "/notes.json", old = dir + "/old.json";
  EXPECT_TRUE(CheckKnowledgeFile(missing).ok());
  std::ofstream(foreign) << "{\"mine\": 1}\n";
  Status st = CheckKnowledgeFile(foreign);
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(st.message().find("notes.json"), std::string::npos) << st.message();
  std::ofstream(old) << "{\"schema\": \"onnxprobe-knowledge\", \"version\": 7, \"entries\": []}\n";
  st = CheckKnowledgeFile(old);
  EXPECT_NE(st.message().find("version 7"), std::string::npos) << st.message();
  RemoveAll(dir);
}

TEST(Causes, NamesAreStable) {
  // the JSON report and the knowledge file carry these names (docs/diagnose.md)
  EXPECT_STREQ(CauseName(Cause::kOptimizer), "optimizer");
  EXPECT_STREQ(CauseName(Cause::kKernelChange), "kernel-change");
  EXPECT_STREQ(CauseName(Cause::kFloat16Range), "float16-range");
  EXPECT_STREQ(CauseName(Cause::kTrainingMode), "training-mode");
  EXPECT_STREQ(CauseName(Cause::kCapturePrecision), "capture-precision");
  EXPECT_STREQ(CertaintyName(Certainty::kLikely), "likely");
}

}  // namespace
}  // namespace onnxprobe
