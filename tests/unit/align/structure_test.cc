// The pieces of structural alignment on a real torch-exported graph (tests/data/demo/demo_cnn.onnx:
// features.0 Conv (BatchNorm features.1 folded in), features.2 ReLU, features.3 Conv (+ folded
// BatchNorm features.4), features.5 ReLU, features.6 Conv, features.7 ReLU, pool, functional
// Flatten, classifier Linear, functional Softmax -> "probs").
#include <gtest/gtest.h>

#include <cmath>

#include "align/call_graph.h"
#include "align/evidence.h"
#include "align/plan.h"
#include "align/torch_calls.h"

namespace onnxprobe::align {
namespace {

TEST(UnqualifiedName, IsThePathFromTheLastNonNumericAtom) {
  EXPECT_EQ(UnqualifiedName("layer1.0.conv1"), "conv1");
  EXPECT_EQ(UnqualifiedName("layer1.0"), "layer1.0");
  EXPECT_EQ(UnqualifiedName("features.4.block.1.2"), "block.1.2");
  EXPECT_EQ(UnqualifiedName("fc"), "fc");
  EXPECT_EQ(UnqualifiedName("0.1"), "0.1");
}

TEST(NodeScope, StripsTheOpName) {
  std::string s;
  ASSERT_TRUE(NodeScope("/layer1/layer1.0/conv1/Conv", &s));
  EXPECT_EQ(s, "/layer1/layer1.0/conv1");
  ASSERT_TRUE(NodeScope("/Add_3", &s));
  EXPECT_EQ(s, "");
  EXPECT_FALSE(NodeScope("Identity_0", &s));
}

TEST(ChooseByValue, TakesAClearWinnerOrNothing) {
  std::string why;
  EXPECT_EQ(ChooseByValue({0.3, 1e-6, 0.5}, &why), 1);
  EXPECT_EQ(ChooseByValue({0.2, 0.25}, &why), -1);  // no clear winner: unaligned
  EXPECT_NE(why.find("do not tell apart"), std::string::npos);
  EXPECT_EQ(ChooseByValue({1e-7, 2e-7}, &why), 0);  // copies of one value: the first
  // the steps of a converging iteration: all near the reference, one clearly nearest
  EXPECT_EQ(ChooseByValue({4e-4, 2e-5, 1e-7, 3e-6}, &why), 2);
  EXPECT_EQ(ChooseByValue({HUGE_VAL, HUGE_VAL}, &why), -1);
}

// A 1-D tensor of `dtype` holding `v`.
template <typename T>
Tensor Vector(DType dtype, const std::vector<T>& v) {
  Tensor x = *Tensor::Allocate(dtype, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) x.data_as<T>()[i] = v[i];
  return x;
}

TEST(RelativeDistance, IsTheRelativeL2Error) {
  auto t = [](std::vector<float> v) { return Vector(DType::kFloat32, v); };
  EXPECT_DOUBLE_EQ(RelativeDistance(t({3, 4}), t({3, 4})), 0);
  EXPECT_NEAR(RelativeDistance(t({3, 4}), t({3, 5})), 1.0 / 5.0, 1e-12);
  EXPECT_TRUE(std::isinf(RelativeDistance(t({3, 4}), t({3, 4, 5}))));
}

TEST(RelativeDistance, IntegersAreEqualOrAnotherValue) {
  auto t = [](std::vector<int64_t> v) { return Vector(DType::kInt64, v); };
  EXPECT_DOUBLE_EQ(RelativeDistance(t({1500, 7}), t({1500, 7})), 0);
  // 1% in relative L2, within the advisory value search's 1e-2, but another index
  EXPECT_TRUE(std::isinf(RelativeDistance(t({1500, 7}), t({1515, 7}))));
}

// A capture of the demo CNN as the companion records it (calls in call order, dataflow).
TorchCalls DemoCalls() {
  TorchCalls tc;
  tc.dataflow = true;
  auto call = [&](std::string module, std::string type, int parent, std::string scope,
                  std::vector<TorchRef> inputs, TorchRef same_as = {}) {
    TorchCall c;
    c.module = module;
    c.type = type;
    c.parent = parent;
    c.scope = scope;
    c.inputs = std::move(inputs);
    c.outputs.push_back({module, same_as});
    c.batchnorm = type == "BatchNorm2d";
    c.params = {{module + ".weight"}, {module + ".bias"}};
    tc.calls.push_back(std::move(c));
  };
  using K = TorchRef::Kind;
  call("model", "DemoCnn", -1, "", {{K::kInput, "input"}}, {});
  call("features", "Sequential", 0, "/features", {{K::kInput, "input"}},
       {K::kTensor, "features.7"});
  const char* types[] = {"Conv2d",      "BatchNorm2d", "ReLU",   "Conv2d",
                         "BatchNorm2d", "ReLU",        "Conv2d", "ReLU"};
  for (int k = 0; k < 8; ++k) {
    std::string m = "features." + std::to_string(k);
    TorchRef in = k == 0 ? TorchRef{K::kInput, "input"}
                         : TorchRef{K::kTensor, "features." + std::to_string(k - 1)};
    call(m, types[k], 1, "/features/" + m, {in});
  }
  call("pool", "AdaptiveAvgPool2d", 0, "/pool", {{K::kTensor, "features"}});
  call("classifier", "Linear", 0, "/classifier", {});  // read a functional Flatten's output
  // tensors in completion order
  std::vector<std::pair<std::string, int>> order;
  for (int k = 0; k < 8; ++k) order.emplace_back("features." + std::to_string(k), 2 + k);
  order.emplace_back("features", 1);
  order.emplace_back("pool", 10);
  order.emplace_back("classifier", 11);
  order.emplace_back("model", 0);
  for (const auto& [name, c] : order) {
    TorchTensorMeta m;
    m.name = name;
    m.call = c;
    tc.tensors.push_back(m);
  }
  return tc;
}

TEST(CallGraph, OutputsOfACallAreWhatItsScopeHandsOn) {
  auto model = Model::Load(std::string(ONNXPROBE_TEST_DATA) + "/demo/demo_cnn.onnx");
  ASSERT_TRUE(model.ok());
  TorchCalls tc = DemoCalls();
  CallGraph g(tc, *model);
  EXPECT_EQ(g.root(), 0);
  EXPECT_EQ(g.outputs(2), std::vector<std::string>{"/features/features.0/Conv_output_0"});
  EXPECT_TRUE(g.nodes(3).empty());  // features.1: the folded BatchNorm left no node
  EXPECT_EQ(g.outputs(1), std::vector<std::string>{"/features/features.7/Relu_output_0"});
  EXPECT_EQ(g.inputs(1), std::vector<std::string>{"input"});
  EXPECT_EQ(g.outputs(0), std::vector<std::string>{"probs"});
  EXPECT_TRUE(g.dynamic("/Flatten_output_0"));
  EXPECT_FALSE(g.dynamic("features.6.weight"));
  EXPECT_FALSE(g.HasOp(1, "BatchNormalization"));
}

TEST(PlanAlignment, FoldedBatchNormAliasesTheConvolutionAndContainersFollowTheirChild) {
  auto model = Model::Load(std::string(ONNXPROBE_TEST_DATA) + "/demo/demo_cnn.onnx");
  ASSERT_TRUE(model.ok());
  TorchCalls tc = DemoCalls();
  CallGraph g(tc, *model);
  std::vector<Plan> plans = PlanAlignment(tc, g, *model);
  ASSERT_EQ(plans.size(), tc.tensors.size());
  // features.0: its own Conv output (the fold is applied when the plans are resolved)
  EXPECT_EQ(plans[0].candidates, std::vector<std::string>{"/features/features.0/Conv_output_0"});
  EXPECT_EQ(plans[1].method, AlignMethod::kBnFolded);  // features.1
  EXPECT_EQ(plans[1].alias, 0);
  EXPECT_EQ(plans[1].fold_of, 0);
  EXPECT_EQ(plans[8].method, AlignMethod::kContainer);  // features: the same tensor as features.7
  EXPECT_EQ(plans[8].alias, 7);
  // classifier read a tensor no module made: its Gemm output is still its own
  EXPECT_EQ(plans[10].candidates, std::vector<std::string>{"/classifier/Gemm_output_0"});
  EXPECT_EQ(plans[11].candidates, std::vector<std::string>{"probs"});  // the model's output
}

TEST(CallGraph, RepeatedCallsThatLeftNodesOnlySometimesAreUncertain) {
  auto model = Model::Load(std::string(ONNXPROBE_TEST_DATA) + "/demo/demo_cnn.onnx");
  ASSERT_TRUE(model.ok());
  TorchCalls tc = DemoCalls();
  // a third call of scope /pool whose nodes the exporter would have named /pool_1: the graph has
  // one /pool group for two calls, so neither call knows its nodes
  TorchCall again = tc.calls[10];
  again.scope_ordinal = 1;
  tc.calls.push_back(again);
  CallGraph g(tc, *model);
  EXPECT_FALSE(g.certain(10));
  EXPECT_FALSE(g.certain(12));
  EXPECT_TRUE(g.certain(2));
}

}  // namespace
}  // namespace onnxprobe::align
