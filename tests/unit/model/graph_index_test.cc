#include <gtest/gtest.h>

#include "onnxprobe/model/model.h"

namespace onnxprobe {
namespace {

const std::string kDemo = std::string(ONNXPROBE_TEST_DATA) + "/demo/demo_cnn.onnx";

TEST(GraphIndex, DemoModelStructure) {
  auto m = Model::Load(kDemo);
  ASSERT_TRUE(m.ok()) << m.status().message();
  const GraphIndex& g = m->index();
  ASSERT_EQ(g.nodes().size(), 10u);
  EXPECT_EQ(g.nodes().front().op_type, "Conv");
  EXPECT_EQ(g.nodes().back().op_type, "Softmax");
  const TensorEntry* relu = g.Find("/features/features.2/Relu_output_0");
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ(relu->kind, TensorKind::kIntermediate);
  EXPECT_EQ(g.nodes()[relu->producer].name, "/features/features.2/Relu");
  ASSERT_EQ(relu->consumers.size(), 1u);
  EXPECT_EQ(g.nodes()[relu->consumers[0]].op_type, "Conv");
  // every consumer comes after its producer
  for (const auto& t : g.tensors()) {
    for (int c : t.consumers) EXPECT_GT(c, t.producer) << t.name;
  }
  EXPECT_EQ(g.Find("input")->kind, TensorKind::kGraphInput);
  EXPECT_EQ(g.Find("probs")->kind, TensorKind::kGraphOutput);
  EXPECT_EQ(g.Find("nope"), nullptr);
  EXPECT_EQ(g.CapturableTensors().size(), 10u);
}

TEST(Model, SummaryNamesSymbolicDims) {
  auto m = Model::Load(kDemo);
  ASSERT_TRUE(m.ok());
  const ModelSummary& s = m->summary();
  ASSERT_EQ(s.inputs.size(), 1u);
  EXPECT_EQ(ValueInfoTypeString(s.inputs[0]), "float32[batch, 3, 32, 32]");
  EXPECT_EQ(s.op_counts.at("Conv"), 3);
  EXPECT_EQ(s.param_count, 14666u);
}

TEST(Model, LoadErrorsNameTheFile) {
  auto m = Model::Load("/nonexistent/model.onnx");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(m.status().message().find("/nonexistent/model.onnx"), std::string::npos);
}

}  // namespace
}  // namespace onnxprobe
