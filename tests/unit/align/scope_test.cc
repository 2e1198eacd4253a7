#include <gtest/gtest.h>

#include "onnxprobe/align/align.h"

namespace onnxprobe {
namespace {

TEST(ScopeModulePath, TorchExporterNames) {
  std::vector<std::string> modules = {"layer1",        "layer1.0",   "layer1.0.conv1",
                                      "layer1.0.relu", "features.0", "fc"};
  int call = -1;
  EXPECT_EQ(ScopeModulePath("/layer1/layer1.0/conv1/Conv", modules, &call), "layer1.0.conv1");
  EXPECT_EQ(call, 0);
  EXPECT_EQ(ScopeModulePath("/features/features.0/Conv", modules, &call), "features.0");
  EXPECT_EQ(ScopeModulePath("/fc/Gemm", modules, &call), "fc");
}

TEST(ScopeModulePath, RepeatedCallsOfOneModule) {
  std::vector<std::string> modules = {"layer1.0.relu"};
  int call = -1;
  EXPECT_EQ(ScopeModulePath("/layer1/layer1.0/relu_2/Relu", modules, &call), "layer1.0.relu");
  EXPECT_EQ(call, 2);
  // a module really named relu_1 is not a second call of relu
  std::vector<std::string> named = {"block.relu", "block.relu_1"};
  EXPECT_EQ(ScopeModulePath("/block/relu_1/Relu", named, &call), "block.relu_1");
  EXPECT_EQ(call, 0);
}

TEST(ScopeModulePath, NamesWithoutScope) {
  int call = -1;
  EXPECT_EQ(ScopeModulePath("Conv_0", {}, &call), "");
  EXPECT_EQ(ScopeModulePath("/Flatten", {}, &call), "");
  EXPECT_EQ(ScopeModulePath("", {}, &call), "");
}

TEST(AlignByScope, RealExportedGraphWithFoldedBatchNorm) {
  // the demo CNN was exported by torch 1.13 with BatchNorm folded into the convolutions
  auto model = Model::Load(std::string(ONNXPROBE_TEST_DATA) + "/demo/demo_cnn.onnx");
  ASSERT_TRUE(model.ok());
  auto side = [](std::string module, std::string type, int order) {
    SideTensor t;
    t.name = t.module = std::move(module);
    t.module_type = std::move(type);
    t.topo_index = order;
    return t;
  };
  std::vector<SideTensor> torch = {
      side("features.0", "Conv2d", 0), side("features.1", "BatchNorm2d", 1),
      side("features.2", "ReLU", 2),   side("features", "Sequential", 3),
      side("classifier", "Linear", 4), side("model", "DemoCnn", 5)};
  Alignment al = AlignByScope(torch, *model);
  ASSERT_EQ(al.rows.size(), 6u);
  EXPECT_EQ(al.rows[0].onnx_tensor, "");  // pre-BatchNorm activation: fused, no counterpart
  EXPECT_NE(al.rows[0].note.find("BatchNorm folded"), std::string::npos);
  EXPECT_EQ(al.rows[1].method, AlignMethod::kBnFolded);
  EXPECT_EQ(al.rows[1].onnx_tensor, "/features/features.0/Conv_output_0");
  EXPECT_EQ(al.rows[2].onnx_tensor, "/features/features.2/Relu_output_0");
  EXPECT_EQ(al.rows[3].onnx_tensor, "/features/features.2/Relu_output_0");  // the container
  EXPECT_EQ(al.rows[4].onnx_tensor, "/classifier/Gemm_output_0");
  EXPECT_EQ(al.rows[5].onnx_tensor, "probs");
  EXPECT_EQ(al.rename.count("features.0"), 0u);
}

}  // namespace
}  // namespace onnxprobe
