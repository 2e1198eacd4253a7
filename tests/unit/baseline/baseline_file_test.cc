// baseline.json written by BaselineJson reads back field for field; malformed files fail as
// kCorrupt naming the field, missing pieces as kNotFound.
#include "baseline/baseline_file.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;

namespace onnxprobe {
namespace {

class BaselineFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::path(::testing::TempDir()) /
           ("baseline_" +
            std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "samples" / "00000_a");
    std::ofstream(dir_ / "samples" / "00000_a" / "manifest.json") << "{}";
  }
  void Write(const std::string& text) { std::ofstream(dir_ / "baseline.json") << text; }
  Baseline Sample() const {
    Baseline b;
    b.model_path = "m.onnx";
    b.created = "2026-01-01T00:00:00Z";
    b.environment.runtime_version = "1.23.2";
    b.environment.session.provider = "CUDA";
    b.environment.session.provider_options = {{"device_id", "1"}};
    b.environment.session.optimization_level = OptLevel::kAll;
    b.environment.session.sequential = false;
    b.environment.session.intra_op_threads = 3;
    b.environment.cpu_flags = {"avx", "avx2"};
    b.environment.cpu_count = 12;
    b.environment.model_sha256 = "ab";
    b.policy.global.atol = 1e-4;
    b.policy.global.scale_atol = false;
    b.policy.judge = JudgeBy::kP99;
    b.policy.rules.push_back({"Conv", true, {2e-4, 3e-3, true, 0}});
    b.selection.op_types = {"Conv"};
    b.tensors = {"t", "y"};
    b.samples.push_back({"a", SampleSource::kSeed, 7, {}, "samples/00000_a"});
    return b;
  }
  fs::path dir_;
};

TEST_F(BaselineFile, RoundTrips) {
  Write(BaselineJson(Sample()));
  auto b = ReadBaseline(dir_.string());
  ASSERT_TRUE(b.ok()) << b.status().message();
  const Environment& e = b->environment;
  EXPECT_EQ(e.session.provider, "CUDA");
  EXPECT_EQ(e.session.provider_options.at("device_id"), "1");
  EXPECT_EQ(e.session.optimization_level, OptLevel::kAll);
  EXPECT_FALSE(e.session.sequential);
  EXPECT_EQ(e.session.intra_op_threads, 3);
  EXPECT_EQ(e.cpu_flags, (std::vector<std::string>{"avx", "avx2"}));
  EXPECT_EQ(e.cpu_count, 12);
  EXPECT_DOUBLE_EQ(b->policy.global.atol, 1e-4);
  EXPECT_FALSE(b->policy.global.scale_atol);
  EXPECT_EQ(b->policy.judge, JudgeBy::kP99);
  EXPECT_DOUBLE_EQ(b->policy.rel_eps, -1);
  ASSERT_EQ(b->policy.rules.size(), 1u);
  EXPECT_TRUE(b->policy.rules[0].by_op_type);
  EXPECT_DOUBLE_EQ(b->policy.rules[0].tolerance.rtol, 3e-3);
  EXPECT_EQ(b->selection.op_types, (std::vector<std::string>{"Conv"}));
  EXPECT_EQ(b->tensors, (std::vector<std::string>{"t", "y"}));
  ASSERT_EQ(b->samples.size(), 1u);
  EXPECT_EQ(b->samples[0].seed, 7u);
  EXPECT_TRUE(DiffEnvironments(Sample().environment, e).empty());
}

TEST_F(BaselineFile, MalformedFieldsAreCorruptAndNamed) {
  Baseline b = Sample();
  b.samples[0].dump = "../elsewhere";
  Write(BaselineJson(b));
  auto r = ReadBaseline(dir_.string());
  EXPECT_EQ(r.status().code(), ErrorCode::kCorrupt);
  EXPECT_NE(r.status().message().find("leaves the baseline folder"), std::string::npos);

  std::string text = BaselineJson(Sample());
  std::string newer = text;
  ASSERT_NE(newer.find("\"version\": 1,"), std::string::npos);
  newer.replace(newer.find("\"version\": 1,"), 12, "\"version\": 9");
  Write(newer);
  EXPECT_EQ(ReadBaseline(dir_.string()).status().code(), ErrorCode::kCorrupt);

  std::string negative = text;  // the global atol's value, up to the comma
  size_t at = negative.find("\"atol\": ", negative.find("\"thresholds\"")) + 8;
  negative.replace(at, negative.find(',', at) - at, "-1");
  Write(negative);
  r = ReadBaseline(dir_.string());
  EXPECT_EQ(r.status().code(), ErrorCode::kCorrupt);
  EXPECT_NE(r.status().message().find("thresholds"), std::string::npos);
}

TEST_F(BaselineFile, MissingDumpOrModelCopyIsNotFound) {
  Baseline b = Sample();
  b.samples[0].dump = "samples/00001_b";
  Write(BaselineJson(b));
  EXPECT_EQ(ReadBaseline(dir_.string()).status().code(), ErrorCode::kNotFound);
  b = Sample();
  b.model_kept = true;
  Write(BaselineJson(b));
  EXPECT_EQ(ReadBaseline(dir_.string()).status().code(), ErrorCode::kNotFound);
}

}  // namespace
}  // namespace onnxprobe
