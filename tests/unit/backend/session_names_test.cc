// Optimization levels and skip reasons: the names and numbers users, dumps and bundles use,
// checked against ONNX Runtime's documented values (GraphOptimizationLevel: 0, 1, 2, 99).
#include <gtest/gtest.h>

#include "onnxprobe/backend/backend.h"

namespace onnxprobe {
namespace {

TEST(OptLevel, NamesNumbersAndOrderFollowOnnxRuntime) {
  const std::pair<const char*, int> expected[] = {
      {"disabled", 0}, {"basic", 1}, {"extended", 2}, {"all", 99}};
  ASSERT_EQ(std::size(kOptLevels), std::size(expected));
  for (size_t i = 0; i < std::size(expected); ++i) {
    EXPECT_EQ(OptLevelName(kOptLevels[i]), expected[i].first);
    EXPECT_EQ(OptLevelNumber(kOptLevels[i]), expected[i].second);
    if (i > 0) {
      EXPECT_LT(kOptLevels[i - 1], kOptLevels[i]);
    }
  }
}

TEST(OptLevel, ParsesNamesNumbersAndOffAndRefusesTheRest) {
  EXPECT_EQ(*ParseOptLevelName("all"), OptLevel::kAll);
  EXPECT_EQ(*ParseOptLevelName("99"), OptLevel::kAll);
  EXPECT_EQ(*ParseOptLevelName("2"), OptLevel::kExtended);
  EXPECT_EQ(*ParseOptLevelName("off"), OptLevel::kDisabled);
  auto bad = ParseOptLevelName("3");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("'3'"), std::string::npos) << bad.status().message();
  EXPECT_FALSE(ParseOptLevelName("ALL").ok());
}

TEST(OptLevel, ANumberReadFromAFileMustBeALevel) {
  EXPECT_EQ(*OptLevelFromNumber(0), OptLevel::kDisabled);
  EXPECT_EQ(*OptLevelFromNumber(99), OptLevel::kAll);
  for (double n : {-1.0, 3.0, 1.5, 100.0}) {
    auto got = OptLevelFromNumber(n);
    EXPECT_FALSE(got.ok()) << n;
  }
}

TEST(SkipReason, KindsHaveStableNamesAndARecordReadsAsNameAndWhy) {
  EXPECT_STREQ(SkipKindName(SkipKind::kNone), "");
  EXPECT_STREQ(SkipKindName(SkipKind::kNotATensor), "not_a_tensor");
  EXPECT_STREQ(SkipKindName(SkipKind::kUnsupportedType), "unsupported_type");
  EXPECT_STREQ(SkipKindName(SkipKind::kFixedByModel), "fixed_by_model");
  EXPECT_TRUE(SkipReason().empty());
  SkippedTensor s{"seq_out", {SkipKind::kNotATensor, "not a tensor"}};
  EXPECT_FALSE(s.reason.empty());
  EXPECT_EQ(s.ToString(), "seq_out: not a tensor");
}

}  // namespace
}  // namespace onnxprobe
