// Compare(request) end to end on the demo CNN and its copy with a changed convolution (the
// faulty node is known by construction: tests/data/make_demo_model.py), and request validation.
#include "onnxprobe/pipeline/engine.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

namespace onnxprobe {
namespace {

const std::string kDemo = std::string(ONNXPROBE_TEST_DATA) + "/demo/demo_cnn.onnx";
const std::string kFaulty = std::string(ONNXPROBE_TEST_DATA) + "/demo/demo_cnn_faulty.onnx";
const std::string kFaultyTensor = "/features/features.3/Conv_output_0";

CompareRequest DemoRequest(const std::string& b) {
  CompareRequest req;
  req.a.path = kDemo;
  req.b.path = b;
  req.inputs.dim_params = {{"batch", 1}};
  return req;
}

TEST(Compare, NamesTheChangedNodeAndReturnsACompleteReport) {
  size_t rows_seen = 0;
  CompareRequest req = DemoRequest(kFaulty);
  req.inputs.seed = 11;
  req.on_row = [&](const TensorResult&, size_t, size_t) { ++rows_seen; };
  auto rep = Compare(req);
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  const ComparisonResult& r = rep->comparison;
  EXPECT_FALSE(rep->passed());
  EXPECT_EQ(r.rows.size(), 10u);  // every node output of the demo graph
  EXPECT_EQ(rows_seen, r.rows.size());
  ASSERT_EQ(r.frontier.size(), 1u);
  EXPECT_EQ(r.rows[r.frontier[0]].name, kFaultyTensor);
  EXPECT_EQ(r.rows[r.first_failure].name, kFaultyTensor);
  EXPECT_TRUE(r.frontier_from_graph);
  EXPECT_EQ(r.rows[0].name, "/features/features.0/Conv_output_0");
  EXPECT_TRUE(r.rows[0].pass);

  const LocalizeResult& l = rep->localization;
  EXPECT_TRUE(l.ran);
  ASSERT_FALSE(l.culprits.empty());
  EXPECT_EQ(l.culprits[0].tensor, kFaultyTensor);
  EXPECT_TRUE(l.culprits[0].introduced);
  EXPECT_TRUE(rep->origin_note.empty());  // the frontier says where the error is born

  ASSERT_EQ(rep->inputs.size(), 1u);
  EXPECT_EQ(rep->inputs[0].name, "input");
  EXPECT_EQ(rep->inputs[0].dtype, DType::kFloat32);
  EXPECT_EQ(rep->inputs[0].shape, (Shape{1, 3, 32, 32}));
  EXPECT_EQ(rep->input_origin, InputOrigin::kGenerated);
  EXPECT_EQ(rep->input_seed, 11u);
  EXPECT_TRUE(rep->alignment.empty());
  EXPECT_EQ(r.side_a.path, kDemo);
  EXPECT_EQ(r.side_b.path, kFaulty);
  EXPECT_NE(r.side_a.model_sha256, r.side_b.model_sha256);
}

TEST(Compare, AModelAgainstItselfPasses) {
  auto rep = Compare(DemoRequest(kDemo));
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  EXPECT_TRUE(rep->passed());
  EXPECT_EQ(rep->comparison.failures, 0u);
  EXPECT_EQ(rep->comparison.first_difference, -1);  // same runtime, same options: bit-exact
  EXPECT_FALSE(rep->localization.ran);              // nothing failed: nothing to isolate
}

TEST(Compare, BisectionAgreesWithTheFullComparison) {
  CompareRequest req = DemoRequest(kFaulty);
  req.localize = false;
  auto full = Compare(req);
  req.bisect_per_run = 2;
  auto rep = Compare(req);
  ASSERT_TRUE(full.ok()) << full.status().message();
  ASSERT_TRUE(rep.ok()) << rep.status().message();
  const ComparisonResult& r = rep->comparison;
  EXPECT_TRUE(r.bisected);
  EXPECT_FALSE(full->comparison.bisected);
  ASSERT_GE(r.first_failure, 0);
  EXPECT_EQ(r.rows[r.first_failure].name, kFaultyTensor);
  EXPECT_EQ(r.frontier, full->comparison.frontier);
  EXPECT_EQ(r.failures, full->comparison.failures);
  ASSERT_EQ(r.rows.size(), full->comparison.rows.size());
  for (size_t i = 0; i < r.rows.size(); ++i) {
    EXPECT_EQ(r.rows[i].name, full->comparison.rows[i].name);
    EXPECT_EQ(r.rows[i].role, full->comparison.rows[i].role) << r.rows[i].name;
  }
  EXPECT_GT(r.bisect_rounds, 0u);
  EXPECT_FALSE(rep->localization.ran);
}

TEST(Compare, SessionOptionsOnADumpSideAreRejected) {
  std::string dump = ::testing::TempDir() + "/compare_dump_side";
  mkdir(dump.c_str(), 0755);  // a folder names a dump
  CompareRequest req = DemoRequest(dump);
  req.b.session_given = true;
  auto rep = Compare(req);
  ASSERT_FALSE(rep.ok());
  EXPECT_EQ(rep.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(rep.status().message().find("side B"), std::string::npos) << rep.status().message();
  EXPECT_NE(rep.status().message().find(dump), std::string::npos) << rep.status().message();
  // no CLI flag names in library errors
  EXPECT_EQ(rep.status().message().find("--"), std::string::npos) << rep.status().message();
}

TEST(Compare, AReproBundleWithoutLocalizationIsRejected) {
  CompareRequest req = DemoRequest(kFaulty);
  req.localize = false;
  req.localize_options.repro_dir = ::testing::TempDir() + "/compare_repro_unused";
  auto rep = Compare(req);
  ASSERT_FALSE(rep.ok());
  EXPECT_EQ(rep.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(rep.status().message().find("compare_repro_unused"), std::string::npos)
      << rep.status().message();
  struct stat st;
  EXPECT_NE(stat(req.localize_options.repro_dir.c_str(), &st), 0);  // nothing written
}

TEST(Compare, AMissingModelNamesTheSide) {
  auto rep = Compare(DemoRequest("/nonexistent/b.onnx"));
  ASSERT_FALSE(rep.ok());
  EXPECT_EQ(rep.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(rep.status().message().find("side B"), std::string::npos) << rep.status().message();
  EXPECT_NE(rep.status().message().find("/nonexistent/b.onnx"), std::string::npos);
}

}  // namespace
}  // namespace onnxprobe
