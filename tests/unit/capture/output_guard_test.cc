// CheckOutputTarget: what an output may replace. Files are written here by hand (the formats'
// first bytes as documented), not by the writers under test.
#include "onnxprobe/capture/output_guard.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "onnxprobe/report/formats.h"
#include "onnxprobe/tensor/npy.h"

namespace fs = std::filesystem;

namespace onnxprobe {
namespace {

// compare's report formats bring their own artifact (report/formats.h)
OutputArtifact Sink(const std::string& format) { return (*FindCompareSink(format))->artifact; }

class OutputGuard : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        fs::path(::testing::TempDir()) /
        ("guard_" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  std::string Write(const std::string& name, const std::string& text) {
    fs::path p = dir_ / name;
    fs::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  std::string Path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST_F(OutputGuard, AbsentTargetIsFine) {
  EXPECT_TRUE(CheckOutputTarget(Path("new.json"), Sink("json"), {}, false).ok());
}

TEST_F(OutputGuard, NeverAnInputEvenWithForce) {
  std::string model = Write("m.onnx", "model bytes");
  for (bool force : {false, true}) {
    Status st = CheckOutputTarget(model, Sink("html"), {model}, force);
    ASSERT_FALSE(st.ok());
    EXPECT_NE(st.message().find("input of this run"), std::string::npos) << st.message();
  }
  // the same file under another spelling
  std::string other = (dir_ / "." / "m.onnx").string();
  EXPECT_FALSE(CheckOutputTarget(other, Sink("json"), {model}, true).ok());
}

TEST_F(OutputGuard, NeverAFolderHoldingAnInput) {
  std::string model = Write("sub/m.onnx", "model bytes");
  Status st = CheckOutputTarget(Path("sub"), OutputKind::kDump, {model}, true);
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("holds"), std::string::npos) << st.message();
}

TEST_F(OutputGuard, OwnJsonReportIsReplaced) {
  std::string own = Write("r.json", "{\n  \"schema\": \"onnxprobe-compare\",\n  \"x\": 1}");
  EXPECT_TRUE(CheckOutputTarget(own, Sink("json"), {}, false).ok());
  // ours, but another kind
  EXPECT_FALSE(CheckOutputTarget(own, OutputKind::kDeterminismJson, {}, false).ok());
}

TEST_F(OutputGuard, ForeignFileOnlyWithForce) {
  std::string foreign = Write("r.json", "{\"schema\": \"someone-else\"}");
  Status st = CheckOutputTarget(foreign, Sink("json"), {}, false);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(st.message().find("r.json"), std::string::npos);
  EXPECT_EQ(st.message().find("--"), std::string::npos) << "no flag names: " << st.message();
  EXPECT_TRUE(CheckOutputTarget(foreign, Sink("json"), {}, true).ok());
}

TEST_F(OutputGuard, HtmlReportByTheJsonItEmbeds) {
  std::string own = Write("r.html",
                          "<!DOCTYPE html>\n<html><head><title>x</title></head><body>"
                          "<script id=\"data\" type=\"application/json\">{\"schema\":"
                          "\"onnxprobe-compare\",\"schema_version\":1}</script></body></html>");
  EXPECT_TRUE(CheckOutputTarget(own, Sink("html"), {}, false).ok());
  std::string plain = Write("p.html", "<!DOCTYPE html>\n<html><body>onnxprobe-compare</body>");
  EXPECT_FALSE(CheckOutputTarget(plain, Sink("html"), {}, false).ok());
}

TEST_F(OutputGuard, EmptyFileAndEmptyFolderHoldNothing) {
  EXPECT_TRUE(CheckOutputTarget(Write("e.json", ""), Sink("json"), {}, false).ok());
  fs::create_directories(dir_ / "empty");
  EXPECT_TRUE(CheckOutputTarget(Path("empty"), OutputKind::kDump, {}, false).ok());
  EXPECT_TRUE(CheckOutputTarget(Path("empty"), OutputKind::kReproBundle, {}, false).ok());
}

TEST_F(OutputGuard, DumpFolderByItsManifest) {
  Write("d/manifest.json", "{\"format\": \"onnxprobe-dump\", \"format_version\": 1}");
  EXPECT_TRUE(CheckOutputTarget(Path("d"), OutputKind::kDump, {}, false).ok());
  Write("notes/keep.txt", "keep me");
  for (bool force : {false, true}) {
    Status st = CheckOutputTarget(Path("notes"), OutputKind::kDump, {}, force);
    ASSERT_FALSE(st.ok()) << "a foreign folder is never replaced";
    EXPECT_NE(st.message().find("folder"), std::string::npos) << st.message();
  }
}

TEST_F(OutputGuard, NpzByItsManifestEntry) {
  Tensor t = *Tensor::Allocate(DType::kFloat32, {2});
  NpzWriter plain;
  ASSERT_TRUE(plain.Open(Path("plain.npz")).ok());
  ASSERT_TRUE(plain.Add("weights", t).ok());
  ASSERT_TRUE(plain.Finish().ok());
  EXPECT_FALSE(CheckOutputTarget(Path("plain.npz"), OutputKind::kDump, {}, false).ok());
  NpzWriter dump;
  ASSERT_TRUE(dump.Open(Path("dump.npz")).ok());
  ASSERT_TRUE(dump.Add("Y", t).ok());
  ASSERT_TRUE(dump.AddRaw("manifest.json", "{\"format\": \"onnxprobe-dump\"}").ok());
  ASSERT_TRUE(dump.Finish().ok());
  EXPECT_TRUE(CheckOutputTarget(Path("dump.npz"), OutputKind::kDump, {}, false).ok());
}

TEST_F(OutputGuard, ReproBundleByOnnxprobeJson) {
  Write("b/onnxprobe.json", "{}");
  EXPECT_TRUE(CheckOutputTarget(Path("b"), OutputKind::kReproBundle, {}, false).ok());
  Write("c/model.onnx", "x");
  EXPECT_FALSE(CheckOutputTarget(Path("c"), OutputKind::kReproBundle, {}, true).ok());
}

TEST_F(OutputGuard, BaselineFoldersDumpSetsAndJUnitFilesAreRecognizedByContent) {
  Write("base/baseline.json", "{\n  \"format\": \"onnxprobe-baseline\",\n  \"version\": 1}");
  EXPECT_TRUE(CheckOutputTarget(Path("base"), OutputKind::kBaseline, {}, false).ok());
  EXPECT_FALSE(CheckOutputTarget(Path("base"), OutputKind::kDumpSet, {}, true).ok());
  Write("set/samples.json", "{\"format\": \"onnxprobe-dump-set\", \"version\": 1}");
  EXPECT_TRUE(CheckOutputTarget(Path("set"), OutputKind::kDumpSet, {}, false).ok());
  Write("other/notes.txt", "mine");
  EXPECT_FALSE(CheckOutputTarget(Path("other"), OutputKind::kBaseline, {}, true).ok());
  std::string junit = Write("j.xml",
                            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                            "<testsuites name=\"onnxprobe baseline check\" tests=\"1\">");
  EXPECT_TRUE(CheckOutputTarget(junit, Sink("junit"), {}, false).ok());
  std::string foreign = Write("k.xml", "<?xml version=\"1.0\"?>\n<testsuites name=\"pytest\">");
  EXPECT_FALSE(CheckOutputTarget(foreign, Sink("junit"), {}, false).ok());
  EXPECT_TRUE(CheckOutputTarget(foreign, Sink("junit"), {}, true).ok());
  std::string check = Write("c.json", "{\"schema\": \"onnxprobe-baseline-check\"}");
  EXPECT_TRUE(CheckOutputTarget(check, OutputKind::kBaselineCheckJson, {}, false).ok());
  EXPECT_FALSE(CheckOutputTarget(check, Sink("json"), {}, false).ok());
  std::string samples = Write("s.json", "{\"schema\": \"onnxprobe-compare-samples\"}");
  EXPECT_TRUE(CheckOutputTarget(samples, Sink("json"), {}, false).ok());
}

}  // namespace
}  // namespace onnxprobe
