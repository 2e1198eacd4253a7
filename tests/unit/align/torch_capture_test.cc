// AlignTorchCapture, parameter parity and module isolation on a real PyTorch capture
// (tests/data/torch, made by make_torch_fixture.py): a Linear, an nn.MultiheadAttention returning
// its weights, a Linear; attn_faulty.onnx has 0.5 added to one element of attn.in_proj_weight.
// The references are PyTorch's own values in the capture.
#include <gtest/gtest.h>

#include <cmath>

#include "onnxprobe/align/align.h"
#include "onnxprobe/side/side.h"

namespace onnxprobe {
namespace {

const std::string kDir = std::string(ONNXPROBE_TEST_DATA) + "/torch/";

class TorchCaptureTest : public ::testing::Test {
 protected:
  void Open(const std::string& onnx) {
    auto t = OpenSide(SideSpec{kDir + "attn.cap"});
    ASSERT_TRUE(t.ok()) << t.status().message();
    torch_ = std::move(*t);
    auto m = Model::Load(kDir + onnx);
    ASSERT_TRUE(m.ok()) << m.status().message();
    model_ = std::make_unique<Model>(std::move(*m));
    auto o = OpenLiveSide(*model_, SideSpec{kDir + onnx});
    ASSERT_TRUE(o.ok()) << o.status().message();
    onnx_ = std::move(*o);
    auto in = torch_->RecordedInputs();
    ASSERT_TRUE(in.ok());
    inputs_ = std::move(*in);
    ASSERT_TRUE(onnx_->SetInputs(inputs_).ok());
    auto al = AlignTorchCapture(*torch_, *onnx_);
    ASSERT_TRUE(al.ok()) << al.status().message();
    al_ = std::move(*al);
  }
  const AlignmentRow& Row(const std::string& name) {
    for (const auto& r : al_.rows) {
      if (r.torch_name == name) return r;
    }
    ADD_FAILURE() << "no row " << name;
    return al_.rows.front();
  }
  const ModuleSpan* Span(const std::string& module) {
    for (const auto& s : al_.modules) {
      if (s.module == module) return &s;
    }
    return nullptr;
  }
  std::unique_ptr<Side> torch_, onnx_;
  std::unique_ptr<Model> model_;
  std::vector<NamedTensor> inputs_;
  Alignment al_;
};

TEST_F(TorchCaptureTest, PairsTheAttentionTupleWithItsOwnOutputs) {
  Open("attn.onnx");
  EXPECT_EQ(Row("out").onnx_tensor, "output_0");
  EXPECT_EQ(Row("attn:1").onnx_tensor, "output_1");  // the attention weights: the 2nd output
  EXPECT_EQ(Row("attn:1").method, AlignMethod::kScope);
  const AlignmentRow& attn = Row("attn");
  ASSERT_FALSE(attn.onnx_tensor.empty());
  EXPECT_EQ(attn.onnx_tensor.rfind("/attn/", 0), 0u);
  EXPECT_TRUE(al_.advisory.empty());
  EXPECT_DOUBLE_EQ(StructuralCoverage(al_), 1.0);
}

TEST_F(TorchCaptureTest, ParityFindsNothingOnTheExportOfTheSameWeights) {
  Open("attn.onnx");
  EXPECT_TRUE(al_.parity.ran);
  EXPECT_EQ(al_.parity.by_name, 8u);  // proj, attn in/out projections, out: weight and bias
  EXPECT_TRUE(al_.parity.findings.empty());
}

TEST_F(TorchCaptureTest, ParityNamesTheNodeWhoseWeightDiffers) {
  Open("attn_faulty.onnx");
  ASSERT_EQ(al_.parity.findings.size(), 1u);
  const ParityFinding& f = al_.parity.findings[0];
  EXPECT_EQ(f.issue, ParityIssue::kDiffers);
  EXPECT_EQ(f.initializer, "attn.in_proj_weight");
  EXPECT_EQ(f.parameter, "attn.in_proj_weight");
  EXPECT_EQ(f.module, "attn");
  EXPECT_EQ(f.differing, 1u);
  EXPECT_EQ(f.count, 192u);
  EXPECT_NEAR(f.max_abs, 0.5, 1e-6);
  EXPECT_TRUE(f.op_type == "MatMul" || f.op_type == "Gemm") << f.op_type;
  EXPECT_EQ(f.node.rfind("/attn/", 0), 0u);
  EXPECT_NE(Row("attn").note.find("parameter parity"), std::string::npos);
}

TEST_F(TorchCaptureTest, IsolatingTheAttentionModuleShowsItMakesTheError) {
  Open("attn_faulty.onnx");
  const ModuleSpan* span = Span("attn");
  ASSERT_NE(span, nullptr);
  EXPECT_GT(span->nodes.size(), 32u);  // more than node-by-node isolation bridges
  EXPECT_EQ(span->inputs_torch, std::vector<std::string>(span->inputs.size(), "proj"));
  auto iso = IsolateModuleCall(*torch_, *onnx_, al_, *span, TolerancePolicy());
  ASSERT_TRUE(iso.ok()) << iso.status().message();
  EXPECT_EQ(iso->output_torch, "attn");
  EXPECT_TRUE(iso->introduced);
  EXPECT_GT(iso->metrics.mismatches, 0u);
}

TEST_F(TorchCaptureTest, IsolatingAnUnfaultedModulePasses) {
  Open("attn.onnx");
  const ModuleSpan* span = Span("attn");
  ASSERT_NE(span, nullptr);
  auto iso = IsolateModuleCall(*torch_, *onnx_, al_, *span, TolerancePolicy());
  ASSERT_TRUE(iso.ok()) << iso.status().message();
  EXPECT_FALSE(iso->introduced) << iso->reason;
}

}  // namespace
}  // namespace onnxprobe
