// PrepareInputs with tensors given in memory (InputOptions::tensors, what the Python package
// passes): used as given without a copy, checked like files, and never given twice.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <memory>

#include "onnxprobe/capture/capture.h"
#include "onnxprobe/tensor/npy.h"

namespace onnxprobe {
namespace {

const std::string kDemo = std::string(ONNXPROBE_TEST_DATA) + "/demo/demo_cnn.onnx";

class GivenInputs : public ::testing::Test {
 protected:
  void SetUp() override {
    auto m = Model::Load(kDemo);
    ASSERT_TRUE(m.ok()) << m.status().message();
    model_ = std::make_unique<Model>(std::move(*m));
  }
  static Tensor Input(Shape shape) {
    auto t = Tensor::Allocate(DType::kFloat32, std::move(shape));
    EXPECT_TRUE(t.ok());
    return std::move(*t);
  }
  std::unique_ptr<Model> model_;
};

TEST_F(GivenInputs, AreUsedWithoutACopy) {
  InputOptions io;
  io.tensors.push_back({"input", Input({2, 3, 32, 32})});
  io.tensors[0].tensor.data_as<float>()[5] = 1.5f;
  auto in = PrepareInputs(*model_, io);
  ASSERT_TRUE(in.ok()) << in.status().message();
  ASSERT_EQ(in->size(), 1u);
  EXPECT_EQ((*in)[0].name, "input");
  EXPECT_EQ((*in)[0].tensor.data(), io.tensors[0].tensor.data());
  EXPECT_EQ((*in)[0].tensor.shape(), (Shape{2, 3, 32, 32}));  // the symbolic batch from the tensor
}

TEST_F(GivenInputs, AreCheckedLikeFiles) {
  InputOptions io;
  io.tensors.push_back({"input", Input({1, 3, 16, 16})});
  auto in = PrepareInputs(*model_, io);
  ASSERT_FALSE(in.ok());
  EXPECT_EQ(in.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(in.status().message().find("input 'input': expected shape"), std::string::npos)
      << in.status().message();

  InputOptions other;
  other.tensors.push_back({"image", Input({1, 3, 32, 32})});
  in = PrepareInputs(*model_, other);
  ASSERT_FALSE(in.ok());
  EXPECT_NE(in.status().message().find(
                "input 'image' (from an array given in memory) is not an input of"),
            std::string::npos)
      << in.status().message();
}

TEST_F(GivenInputs, AndAFileForTheSameInputFail) {
  auto dir = std::filesystem::temp_directory_path() /
             ("onnxprobe_inputs_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string npy = (dir / "input.npy").string();
  ASSERT_TRUE(WriteNpy(npy, Input({1, 3, 32, 32})).ok());
  InputOptions io;
  io.files.push_back(npy);
  io.tensors.push_back({"input", Input({1, 3, 32, 32})});
  auto in = PrepareInputs(*model_, io);
  std::filesystem::remove_all(dir);
  ASSERT_FALSE(in.ok());
  EXPECT_NE(in.status().message().find("input 'input' is given twice (by " + npy +
                                       " and by an array given in memory)"),
            std::string::npos)
      << in.status().message();
}

}  // namespace
}  // namespace onnxprobe
