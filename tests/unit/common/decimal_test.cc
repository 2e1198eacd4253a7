#include "common/decimal.h"

#include <gtest/gtest.h>

namespace onnxprobe {
namespace {

TEST(Decimal, ParsesWholeDigitStringsUpToTheLimit) {
  uint64_t v = 7;
  EXPECT_TRUE(ParseDecimal("0", 10, &v));
  EXPECT_EQ(v, 0u);
  EXPECT_TRUE(ParseDecimal("2147483647", 2147483647u, &v));
  EXPECT_EQ(v, 2147483647u);
  EXPECT_TRUE(ParseDecimal("18446744073709551615", UINT64_MAX, &v));
  EXPECT_EQ(v, UINT64_MAX);
}

TEST(Decimal, RefusesWhatStdStoiWouldThrowOnOrMisread) {
  uint64_t v = 7;
  EXPECT_FALSE(ParseDecimal("2147483648", 2147483647u, &v));  // std::stoi: out_of_range
  EXPECT_FALSE(ParseDecimal("18446744073709551616", UINT64_MAX, &v));
  EXPECT_FALSE(ParseDecimal(std::string(25, '9'), UINT64_MAX, &v));
  EXPECT_FALSE(ParseDecimal("-5", UINT64_MAX, &v));     // std::stoull wraps it to 2^64 - 5
  EXPECT_FALSE(ParseDecimal("12abc", UINT64_MAX, &v));  // std::stoull reads 12
  EXPECT_FALSE(ParseDecimal(" 1", UINT64_MAX, &v));
  EXPECT_FALSE(ParseDecimal("", UINT64_MAX, &v));
  EXPECT_FALSE(ParseDecimal("7", 5, &v));  // a digit above a small limit
  EXPECT_EQ(v, 7u);                        // untouched on refusal
}

}  // namespace
}  // namespace onnxprobe
