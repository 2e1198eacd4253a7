// The ONNX Runtime support table's lookup (lint/ort_support.h). Whether the rows are right is
// tested against real libraries in tests/python/test_lint.py.
#include "lint/ort_support.h"

#include <gtest/gtest.h>

namespace onnxprobe::lint {
namespace {

TEST(OrtSupport, PatchVersionsShareTheirRow) {
  OrtSupport a, b;
  ASSERT_TRUE(LookupOrtSupport("1.23.2", &a));
  ASSERT_TRUE(LookupOrtSupport("1.23", &b));
  EXPECT_EQ(a.release, "1.23");
  EXPECT_EQ(a.onnx_opset, b.onnx_opset);
  EXPECT_EQ(a.ir_version, b.ir_version);
}

TEST(OrtSupport, NewerReleasesNeverSupportLess) {
  OrtSupport prev;
  ASSERT_TRUE(LookupOrtSupport("1.0.0", &prev));
  for (int minor = 1; minor <= 40; ++minor) {
    OrtSupport s;
    if (!LookupOrtSupport("1." + std::to_string(minor) + ".0", &s)) {
      EXPECT_GT(minor, 23) << "every release up to 1.23 has a row";  // 1.24-1.31 unmeasured
      continue;
    }
    EXPECT_GE(s.onnx_opset, prev.onnx_opset) << minor;
    EXPECT_GE(s.ir_version, prev.ir_version) << minor;
    prev = s;
  }
  EXPECT_EQ(NewestKnownOrt().release, prev.release);
  EXPECT_EQ(prev.release, "1.32");  // the bootstrap's pinned runtime has a row
}

TEST(OrtSupport, UnknownVersionsAreNotGuessed) {
  OrtSupport s;
  EXPECT_FALSE(LookupOrtSupport("9.1", &s));
  EXPECT_FALSE(LookupOrtSupport("", &s));
  EXPECT_FALSE(LookupOrtSupport("one.two", &s));
}

}  // namespace
}  // namespace onnxprobe::lint
