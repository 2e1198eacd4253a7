#include "pipeline/retained_side.h"

#include <gtest/gtest.h>

#include "../fake_side.h"

namespace onnxprobe {
namespace {

fake::FakeSide ThreeTensors() {
  fake::FakeSide side;
  side.Add("x", "n0", "Relu", fake::MakeF32({2}, {1, 2}))
      .Add("y", "n1", "MatMul", fake::MakeF32({2}, {3, 4}))
      .Add("z", "n2", "Add", fake::MakeF32({2}, {5, 6}));
  return side;
}

TEST(RetainedSide, TensorsAskedForAlsoComeWithTheNextRunAndAreAnsweredFromMemory) {
  fake::FakeSide inner = ThreeTensors();
  RetainedSide side(inner);
  ASSERT_TRUE(side.SetInputs({}).ok());
  side.AlsoFetch({"y", "z"});
  auto first = side.Fetch({"z", "x"});
  ASSERT_TRUE(first.ok()) << first.status().message();
  ASSERT_EQ(first->size(), 2u);
  EXPECT_EQ((*first)[0].name, "z");
  EXPECT_EQ((*first)[1].name, "x");
  ASSERT_EQ(inner.fetch_log().size(), 1u);
  EXPECT_EQ(inner.fetch_log()[0], (std::vector<std::string>{"z", "x", "y"}));  // z asked once
  auto later = side.Fetch({"y"});
  ASSERT_TRUE(later.ok());
  EXPECT_EQ((*later)[0].tensor.data_as<float>()[1], 4.0f);
  EXPECT_EQ(inner.fetches(), 1u);  // no second run
}

TEST(RetainedSide, NewInputsForgetWhatWasKeptAndWhatWasToComeAlong) {
  fake::FakeSide inner = ThreeTensors();
  RetainedSide side(inner);
  side.AlsoFetch({"y"});
  ASSERT_TRUE(side.SetInputs({}).ok());
  ASSERT_TRUE(side.Fetch({"x"}).ok());
  ASSERT_TRUE(side.Fetch({"x"}).ok());
  ASSERT_EQ(inner.fetch_log().size(), 1u);
  EXPECT_EQ(inner.fetch_log()[0], (std::vector<std::string>{"x"}));
  ASSERT_TRUE(side.SetInputs({}).ok());
  ASSERT_TRUE(side.Fetch({"x"}).ok());
  EXPECT_EQ(inner.fetches(), 2u);  // the new inputs' values are fetched again
}

}  // namespace
}  // namespace onnxprobe
