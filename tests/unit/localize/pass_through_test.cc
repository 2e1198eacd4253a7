// PassThroughSource on a graph built with ONNX's generated classes: which node inside a module
// call's span makes the error its output shows, from the graph alone.
#include "localize/pass_through.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "../graph_builder.h"

namespace onnxprobe {
namespace {

using test::AddInitializer;
using test::AddNode;

class PassThroughTest : public ::testing::Test {
 protected:
  void SetUp() override {
    onnx::ModelProto m = test::ModelWithInputX();
    onnx::GraphProto* g = m.mutable_graph();
    AddInitializer(g, "bias");
    AddInitializer(g, "scale");
    // Hardswish-like: HardSigmoid, Mul by the module's input; then Reshape, Unsqueeze'd weight
    AddNode(g, "HardSigmoid", {"x"}, "h");
    AddNode(g, "Mul", {"x", "h"}, "y");
    AddNode(g, "Shape", {"y"}, "shape");
    AddNode(g, "Reshape", {"y", "shape"}, "r");
    AddNode(g, "Unsqueeze", {"scale"}, "w");
    AddNode(g, "Mul", {"r", "w"}, "rw");
    AddNode(g, "Add", {"rw", "bias"}, "out");
    // two computed operands: nothing says which one carries the error
    AddNode(g, "Sigmoid", {"x"}, "s");
    AddNode(g, "Tanh", {"x"}, "t");
    AddNode(g, "Mul", {"s", "t"}, "st");
    AddNode(g, "Add", {"st", "bias"}, "out2");
    // a message-passing update: zeros_like (ConstantOfShape of a Shape), a scatter, a Transpose,
    // a Concat with a fixed operand
    AddNode(g, "Shape", {"x"}, "xs");
    AddNode(g, "ConstantOfShape", {"xs"}, "zeros");
    AddNode(g, "ScatterElements", {"zeros", "bias", "x"}, "agg");
    AddNode(g, "Transpose", {"agg"}, "aggt");
    AddNode(g, "Concat", {"aggt", "scale"}, "cat");
    AddNode(g, "Add", {"cat", "bias"}, "out3");
    g->add_output()->set_name("out");
    g->add_output()->set_name("out2");
    // a Ghost-style module: two fed halves concatenated, then a window of channels
    AddNode(g, "Concat", {"h", "t"}, "halves");
    AddNode(g, "Slice", {"halves", "bias", "scale"}, "window");
    // GELU as exported: the error of a wrong sqrt(2) shows only after the Erf
    AddNode(g, "Div", {"x", "scale"}, "xs2");
    AddNode(g, "Erf", {"xs2"}, "erf");
    AddNode(g, "Add", {"erf", "bias"}, "erf1");
    AddNode(g, "Mul", {"x", "erf1"}, "xe");
    AddNode(g, "Mul", {"xe", "scale"}, "gelu");
    // a gate computed by a node with an attribute, through a Sigmoid
    AddNode(g, "LeakyRelu", {"x"}, "lr");
    AddNode(g, "Sigmoid", {"lr"}, "gate");
    AddNode(g, "Mul", {"x", "gate"}, "gated");
    // ONNX Runtime's blocked layout turned back: data movement
    AddNode(g, "ReorderOutput", {"lr"}, "lr_nchw");
    AddNode(g, "Add", {"lr_nchw", "bias"}, "reordered");
    g->add_output()->set_name("out3");
    g->add_output()->set_name("gelu");
    g->add_output()->set_name("gated");
    g->add_output()->set_name("reordered");
    g->add_output()->set_name("window");
    std::string error;
    model_ = test::WriteAndLoad(m, "onnxprobe_pass_through", &dir_, &error);
    ASSERT_NE(model_, nullptr) << error;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  int Producer(const std::string& t) { return model_->index().Find(t)->producer; }
  std::vector<int> All() {
    std::vector<int> v;
    for (size_t k = 0; k < model_->index().nodes().size(); ++k) v.push_back(int(k));
    return v;
  }

  std::filesystem::path dir_;
  std::unique_ptr<Model> model_;
};

TEST_F(PassThroughTest, StepsBackThroughNodesWithFixedOtherOperands) {
  const GraphIndex& idx = model_->index();
  EXPECT_EQ(PassThroughSource(idx, All(), {}, "out"), Producer("h"));
  // fed y from outside, nothing inside computes: the error is in a fixed value, nothing named
  std::vector<int> tail{Producer("r"), Producer("w"), Producer("rw"), Producer("out")};
  EXPECT_EQ(PassThroughSource(idx, tail, {"y"}, "out"), -1);
}

TEST_F(PassThroughTest, StopsWhereTwoComputedOperandsMeet) {
  const GraphIndex& idx = model_->index();
  EXPECT_EQ(PassThroughSource(idx, All(), {}, "out2"), Producer("st"));
  // ... unless one of them is fed from outside the span
  EXPECT_EQ(PassThroughSource(idx, All(), {"t"}, "out2"), Producer("s"));
}

TEST_F(PassThroughTest, StepsBackThroughAConcatAndATransposeToTheScatterOfZeros) {
  EXPECT_EQ(PassThroughSource(model_->index(), All(), {}, "out3"), Producer("agg"));
}

TEST_F(PassThroughTest, OnlyFixedValuesReachTheOutputThenTheNodeThatMovesThem) {
  const GraphIndex& idx = model_->index();
  std::vector<int> span{Producer("halves"), Producer("window")};
  EXPECT_EQ(PassThroughSource(idx, span, {"h", "t"}, "window"), Producer("halves"));
  // nothing moves values before the output: nothing named
  EXPECT_EQ(PassThroughSource(idx, {Producer("window")}, {"halves"}, "window"), -1);
}

TEST_F(PassThroughTest, StepsBackThroughFunctionsOfOneInputToTheArithmeticBeforeThem) {
  const GraphIndex& idx = model_->index();
  EXPECT_EQ(PassThroughSource(idx, All(), {}, "gelu"), Producer("xs2"));
  EXPECT_EQ(PassThroughSource(idx, All(), {}, "gated"), Producer("lr"));
  EXPECT_EQ(PassThroughSource(idx, All(), {}, "reordered"), Producer("lr"));
  // a function of a fed value alone: the function is where the error shows first
  std::vector<int> tail{Producer("gate"), Producer("gated")};
  EXPECT_EQ(PassThroughSource(idx, tail, {"lr"}, "gated"), Producer("gate"));
}

TEST_F(PassThroughTest, ANodeThatComputesIsItsOwnSource) {
  const GraphIndex& idx = model_->index();
  EXPECT_EQ(PassThroughSource(idx, All(), {}, "h"), -1);
  EXPECT_EQ(PassThroughSource(idx, {Producer("out")}, {}, "out"), -1);  // alone in its span
  EXPECT_EQ(PassThroughSource(idx, All(), {}, "missing"), -1);
}

}  // namespace
}  // namespace onnxprobe
