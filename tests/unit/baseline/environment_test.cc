// Environment snapshots and their differences; input sample listing.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "onnxprobe/baseline/baseline.h"
#include "onnxprobe/capture/samples.h"

namespace fs = std::filesystem;

namespace onnxprobe {
namespace {

TEST(SameProvider, OneProviderHowEverSpelled) {
  EXPECT_TRUE(SameProvider("cpu", "CPUExecutionProvider"));
  EXPECT_TRUE(SameProvider("", "CPU"));
  EXPECT_TRUE(SameProvider("openvino", "OpenVINOExecutionProvider"));
  EXPECT_FALSE(SameProvider("CPU", "CUDA"));
  EXPECT_FALSE(SameProvider("", "OpenVINO"));
}

TEST(DiffEnvironments, NamesEachChangedFieldInOrder) {
  Environment a;
  a.runtime_version = "1.20.1";
  a.runtime_library = "/x/lib.so";
  a.runtime_library_sha256 = "aa";
  a.cpu_flags = {"avx", "avx2", "sse"};
  a.model_sha256 = "m1";
  Environment b = a;
  EXPECT_TRUE(DiffEnvironments(a, b).empty());
  b.runtime_library = "/y/lib.so";  // same bytes elsewhere: no change
  EXPECT_TRUE(DiffEnvironments(a, b).empty());
  b.session.provider = "cpu";  // the same provider spelled another way: no change
  EXPECT_TRUE(DiffEnvironments(a, b).empty());
  b.session.provider = "CPUExecutionProvider";
  EXPECT_TRUE(DiffEnvironments(a, b).empty());
  b.session.provider = "CUDA";
  ASSERT_EQ(DiffEnvironments(a, b).size(), 1u);
  b.session.provider = a.session.provider;
  b.runtime_version = "1.23.2";
  b.runtime_library_sha256 = "bb";
  b.session.optimization_level = OptLevel::kAll;
  b.session.intra_op_threads = 2;
  b.cpu_flags = {"avx", "avx512f", "sse"};
  b.cpu_count = 16;
  auto d = DiffEnvironments(a, b);
  ASSERT_EQ(d.size(), 6u);
  EXPECT_EQ(d[0].field, EnvField::kRuntimeVersion);
  EXPECT_EQ(d[1].field, EnvField::kRuntimeLibrary);
  EXPECT_EQ(d[2].field, EnvField::kOptimizationLevel);
  EXPECT_EQ(d[2].baseline, "disabled");
  EXPECT_EQ(d[2].current, "all");
  EXPECT_EQ(d[3].field, EnvField::kIntraOpThreads);
  EXPECT_EQ(d[4].field, EnvField::kCpuFlags);
  EXPECT_EQ(d[4].baseline, "avx2");
  EXPECT_EQ(d[4].current, "avx512f");
  EXPECT_STREQ(EnvFieldName(d[4].field), "cpu_flags");
  EXPECT_EQ(d[5].field, EnvField::kCpuCount);
  EXPECT_EQ(d[5].current, "16");
}

class Samples : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("onnxprobe_samples_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  void Touch(const fs::path& p) { std::ofstream(p) << "x"; }
  fs::path dir_;
};

TEST_F(Samples, FolderOfNpzAndTestDataSetsInNameOrder) {
  Touch(dir_ / "b.npz");
  Touch(dir_ / "a.npz");
  Touch(dir_ / "readme.txt");
  fs::create_directories(dir_ / "test_data_set_0");
  Touch(dir_ / "test_data_set_0" / "input_10.pb");
  Touch(dir_ / "test_data_set_0" / "input_2.pb");
  Touch(dir_ / "test_data_set_0" / "output_0.pb");
  SampleOptions o;
  o.inputs_dir = dir_.string();
  o.base.dim_params["batch"] = 2;
  auto s = ListInputSamples(o);
  ASSERT_TRUE(s.ok()) << s.status().message();
  ASSERT_EQ(s->size(), 3u);
  EXPECT_EQ((*s)[0].name, "a");
  EXPECT_EQ((*s)[1].name, "b");
  EXPECT_EQ((*s)[2].name, "test_data_set_0");
  EXPECT_EQ((*s)[2].inputs.files,
            (std::vector<std::string>{(dir_ / "test_data_set_0" / "input_2.pb").string(),
                                      (dir_ / "test_data_set_0" / "input_10.pb").string()}));
  EXPECT_EQ((*s)[0].inputs.dim_params.at("batch"), 2);
  EXPECT_EQ((*s)[0].source, SampleSource::kFiles);
}

TEST_F(Samples, SeedsCountFromTheBaseSeed) {
  SampleOptions o;
  o.count = 3;
  o.base.seed = 40;
  auto s = ListInputSamples(o);
  ASSERT_TRUE(s.ok());
  ASSERT_EQ(s->size(), 3u);
  EXPECT_EQ((*s)[2].name, "seed-42");
  EXPECT_EQ((*s)[2].inputs.seed, 42u);
  EXPECT_EQ(ListInputSamples(SampleOptions())->size(), 1u);  // one seeded sample by default
}

TEST_F(Samples, EmptyFolderMissingFolderAndFilesWithSamplesFail) {
  SampleOptions o;
  o.inputs_dir = dir_.string();
  EXPECT_EQ(ListInputSamples(o).status().code(), ErrorCode::kInvalidArgument);
  o.inputs_dir = (dir_ / "none").string();
  EXPECT_EQ(ListInputSamples(o).status().code(), ErrorCode::kNotFound);
  fs::create_directories(dir_ / "test_data_set_1");
  o.inputs_dir = dir_.string();
  EXPECT_EQ(ListInputSamples(o).status().code(), ErrorCode::kInvalidArgument);  // no input_K.pb
  SampleOptions f;
  f.base.files = {"x.npy"};
  f.count = 2;
  EXPECT_EQ(ListInputSamples(f).status().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace onnxprobe
