// The one batching rule (common/budget_planner.h), checked against hand-worked splits.
#include "onnxprobe/common/budget_planner.h"

#include <gtest/gtest.h>

namespace onnxprobe {
namespace {

using Ranges = std::vector<std::pair<size_t, size_t>>;

Ranges Plan(const std::vector<std::vector<HeldTensor>>& items, uint64_t budget,
            uint64_t largest = 0) {
  return PlanBatches(
      items.size(), [&](size_t i) { return items[i]; }, budget, largest);
}

TEST(BudgetPlanner, NoBudgetIsOneBatchAndNoItemsNone) {
  EXPECT_EQ(Plan({{{"a", 100}}, {{"b", 0}}, {{"c", 1u << 30}}}, 0), (Ranges{{0, 3}}));
  EXPECT_TRUE(Plan({}, 10).empty());
}

TEST(BudgetPlanner, ABatchClosesBeforeTheItemThatWouldGoOver) {
  // 40 + 50 = 90 fits 100; + 20 = 110 does not; 20 + 80 = 100 fits exactly
  EXPECT_EQ(Plan({{{"a", 40}}, {{"b", 50}}, {{"c", 20}}, {{"d", 80}}}, 100),
            (Ranges{{0, 2}, {2, 4}}));
}

TEST(BudgetPlanner, AnItemOverTheBudgetStandsAlone) {
  EXPECT_EQ(Plan({{{"a", 10}}, {{"big", 500}}, {{"b", 10}}}, 100),
            (Ranges{{0, 1}, {1, 2}, {2, 3}}));
}

TEST(BudgetPlanner, ANamedTensorCountsOncePerBatchAnUnnamedOneAlways) {
  // "w" (60) shared by three items: 60 + 10 + 10 + 10 = 90 fits 100
  EXPECT_EQ(Plan({{{"w", 60}, {"x", 10}}, {{"w", 60}, {"y", 10}}, {{"w", 60}, {"z", 10}}}, 100),
            (Ranges{{0, 3}}));
  // unnamed: 60 + 10 each, the second item already goes over
  EXPECT_EQ(Plan({{{"", 60}, {"x", 10}}, {{"", 60}, {"y", 10}}}, 100), (Ranges{{0, 1}, {1, 2}}));
  // a new batch pays for the shared tensor again: 60 + 30, then 60 + 30
  EXPECT_EQ(Plan({{{"w", 60}, {"x", 30}}, {{"w", 60}, {"y", 30}}, {{"w", 60}, {"z", 30}}}, 100),
            (Ranges{{0, 1}, {1, 2}, {2, 3}}));
}

TEST(BudgetPlanner, AnUnknownSizeCountsAsTheLargestKnown) {
  // unknown counts as 40 (given): 40 + 40 = 80 fits, + 40 = 120 does not
  EXPECT_EQ(Plan({{{"a", 0}}, {{"b", 0}}, {{"c", 0}}}, 100, 40), (Ranges{{0, 2}, {2, 3}}));
}

TEST(BudgetPlanner, WhileNothingIsKnownAnUnsizedItemStandsAlone) {
  EXPECT_EQ(Plan({{{"a", 0}}, {{"b", 0}}}, 100), (Ranges{{0, 1}, {1, 2}}));
  EXPECT_EQ(Plan({{{"a", 10}}, {{"b", 0}}, {{"c", 10}}}, 100), (Ranges{{0, 1}, {1, 2}, {2, 3}}));
}

TEST(BudgetPlanner, LearnedSizesPlanTheNextBatch) {
  BudgetPlanner p(100);
  std::vector<HeldTensor> unknown{{"", 0}};
  ASSERT_TRUE(p.Fits(unknown));
  p.Take(unknown);
  EXPECT_FALSE(p.Fits(unknown));  // nothing known: one item alone
  p.Close();
  p.Learn(30);  // the fetched tensor was 30 bytes
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(p.Fits(unknown)) << i;
    p.Take(unknown);
  }
  EXPECT_EQ(p.held(), 90u);
  EXPECT_FALSE(p.Fits(unknown));
}

TEST(BudgetPlanner, NameBatchesKeepOrder) {
  std::vector<std::string> names{"a", "b", "c", "d", "e"};
  std::map<std::string, uint64_t> sizes{{"a", 20}, {"b", 20}, {"c", 70}, {"d", 20}, {"e", 20}};
  auto batches = PlanNameBatches(names, sizes, 100);
  // 20 + 20 = 40, + 70 over; 70 + 20 = 90, + 20 over; 20
  EXPECT_EQ(batches, (std::vector<std::vector<std::string>>{{"a", "b"}, {"c", "d"}, {"e"}}));
}

}  // namespace
}  // namespace onnxprobe
