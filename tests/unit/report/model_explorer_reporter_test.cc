// The Model Explorer node data on a hand-built report: one graph id, one result per named node
// (the largest error / allowed error of its compared outputs), introduced nodes colored apart.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>

#include "onnxprobe/common/json_value.h"
#include "onnxprobe/report/report.h"

namespace onnxprobe {
namespace {

TensorResult Row(const std::string& name, const std::string& node, double ratio,
                 RowState state = RowState::kCompared, Role role = Role::kPass) {
  TensorResult t;
  t.name = t.name_b = name;
  t.node = node;
  t.tolerance_ratio = ratio;
  t.state = state;
  t.role = role;
  return t;
}

TEST(ModelExplorerReporter, OneValuePerNamedNodeWithThresholds) {
  CompareReport rep;
  rep.graph_name = "g";
  auto& rows = rep.comparison.rows;
  rows.push_back(Row("a0", "conv", 0.25));
  rows.push_back(Row("b0", "split", 3.0, RowState::kCompared, Role::kIntroduced));
  rows.push_back(Row("b1", "split", 0.5));
  rows.push_back(Row("c0", "nan_maker", INFINITY, RowState::kCompared, Role::kInherited));
  rows.push_back(Row("d0", "seq", 0, RowState::kNotCompared));
  rows.push_back(Row("e0", "", 7.0));  // unnamed node: no id to key it by
  auto doc = ParseJson(MakeModelExplorerReporter()->Render(rep), "node data");
  ASSERT_TRUE(doc.ok()) << doc.status().message();
  ASSERT_EQ(doc->members().size(), 1u);
  const JsonValue* g = doc->Find("g");
  ASSERT_NE(g, nullptr);
  const JsonValue* results = g->Find("results");
  ASSERT_NE(results, nullptr);
  EXPECT_EQ(results->members().size(), 3u);  // conv, split, nan_maker
  EXPECT_DOUBLE_EQ(results->Find("conv")->Find("value")->as_number(), 0.25);
  EXPECT_EQ(results->Find("conv")->Find("bgColor"), nullptr);
  EXPECT_DOUBLE_EQ(results->Find("split")->Find("value")->as_number(), 3.0);
  EXPECT_NE(results->Find("split")->Find("bgColor"), nullptr);
  EXPECT_DOUBLE_EQ(results->Find("nan_maker")->Find("value")->as_number(), DBL_MAX);
  const auto& th = g->Find("thresholds")->items();
  ASSERT_EQ(th.size(), 4u);
  for (size_t i = 1; i < th.size(); ++i)
    EXPECT_LT(th[i - 1].Find("value")->as_number(), th[i].Find("value")->as_number());
  EXPECT_DOUBLE_EQ(th[2].Find("value")->as_number(), 1.0);  // at the limit: the last passing band
}

TEST(ModelExplorerReporter, AGraphWithoutNameUsesTheAdaptersDefault) {
  CompareReport rep;
  auto doc = ParseJson(MakeModelExplorerReporter()->Render(rep), "node data");
  ASSERT_TRUE(doc.ok());
  EXPECT_NE(doc->Find("<main>"), nullptr);
}

}  // namespace
}  // namespace onnxprobe
