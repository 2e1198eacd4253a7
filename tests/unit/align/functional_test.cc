// Values inside modules: order-preserving candidates for the torch functions a module call ran
// itself, and the op table behind them.
#include "align/functional.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace onnxprobe::align {
namespace {

using Windows = std::vector<std::vector<int>>;

TEST(OrderedWindows, CallOrderLeavesOneCandidateEach) {
  // two bmm records and two MatMul tensors of one type: the first record takes the first one
  EXPECT_EQ(OrderedWindows({{1, 4}, {1, 4}}), (Windows{{1}, {4}}));
  // bmm, softmax, bmm: the softmax in between pins both bmms
  EXPECT_EQ(OrderedWindows({{0, 2, 5}, {3}, {0, 2, 5}}), (Windows{{0, 2}, {3}, {5}}));
}

TEST(OrderedWindows, ARecordWithoutFitsDoesNotConstrainTheOthers) {
  EXPECT_EQ(OrderedWindows({{2}, {}, {6}}), (Windows{{2}, {}, {6}}));
}

TEST(OrderedWindows, NoPlacementInOrderFallsBackToEveryFit) {
  // the second record can only come before the first: order says nothing
  EXPECT_EQ(OrderedWindows({{5}, {1, 3}}), (Windows{{5}, {1, 3}}));
}

TEST(OpsForFunction, NamesTheLastNodeOfTheExport) {
  const auto& linear = OpsForFunction("linear");
  EXPECT_NE(std::find(linear.begin(), linear.end(), "Gemm"), linear.end());
  EXPECT_NE(std::find(linear.begin(), linear.end(), "Add"), linear.end());
  EXPECT_EQ(OpsForFunction("softmax"), std::vector<std::string>{"Softmax"});
  EXPECT_TRUE(OpsForFunction("not_a_torch_function").empty());
}

}  // namespace
}  // namespace onnxprobe::align
