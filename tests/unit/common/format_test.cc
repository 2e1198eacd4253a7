#include "onnxprobe/common/format.h"

#include <gtest/gtest.h>

#include <cmath>

namespace onnxprobe {
namespace {

// The observer-check case printed as "0.000000" with std::to_string.
TEST(FormatNumber, SmallMagnitudesKeepTheirDigits) {
  EXPECT_EQ(FormatNumber(2.98023223876953125e-07), "2.98e-07");
  EXPECT_EQ(FormatNumber(2.98023223876953125e-07, 6), "2.98023e-07");
  EXPECT_EQ(FormatNumber(0.0107421875, 3), "0.0107");
  EXPECT_EQ(FormatNumber(1500.0, 6), "1500");
  EXPECT_EQ(FormatNumber(1500.0), "1.5e+03");
  EXPECT_EQ(FormatNumber(1.5e300, 2), "1.5e+300");
  EXPECT_EQ(FormatNumber(0.0), "0");
  EXPECT_EQ(FormatNumber(INFINITY), "inf");
  EXPECT_EQ(FormatNumber(-INFINITY), "-inf");
}

// A ResNet-50 latency printed as "2.58e+03 ms".
TEST(FormatMs, DurationsReadWithoutAnExponent) {
  EXPECT_EQ(FormatMs(2580.4), "2580 ms");
  EXPECT_EQ(FormatMs(250), "250 ms");
  EXPECT_EQ(FormatMs(58.34), "58.3 ms");
  EXPECT_EQ(FormatMs(0.4123), "0.412 ms");
  EXPECT_EQ(FormatMs(NAN), "nan ms");
}

}  // namespace
}  // namespace onnxprobe
