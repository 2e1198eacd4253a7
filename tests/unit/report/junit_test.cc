// JUnit rendering: counts from the cases, escaping, and a comparison as one suite.
#include "onnxprobe/report/junit.h"

#include <gtest/gtest.h>

#include "onnxprobe/pipeline/sample_compare.h"

namespace onnxprobe {
namespace {

bool Has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

TEST(JUnit, CountsComeFromTheCases) {
  JUnitSuite s;
  s.name = "seed-0";
  s.timestamp = "2026-01-02T03:04:05";
  s.cases = {{"m.onnx", "a", 0.5, JUnitOutcome::kPassed, "", "", ""},
             {"m.onnx", "b", 0.25, JUnitOutcome::kFailure, "tolerance", "max_abs=1", "why"},
             {"m.onnx", "c", 0, JUnitOutcome::kSkipped, "", "sequence", ""},
             {"m.onnx", "d", 0, JUnitOutcome::kError, "runtime", "crashed", ""}};
  s.seconds = 1;
  std::string x = RenderJUnit("onnxprobe test", {s, s});
  EXPECT_TRUE(Has(x,
                  "<testsuites name=\"onnxprobe test\" tests=\"8\" failures=\"2\" errors=\"2\" "
                  "skipped=\"2\" time=\"2.000000\">"));
  EXPECT_TRUE(Has(x,
                  "tests=\"4\" failures=\"1\" errors=\"1\" skipped=\"1\" time=\"1.000000\" "
                  "timestamp=\"2026-01-02T03:04:05\""));
  EXPECT_TRUE(Has(x, "<testcase classname=\"m.onnx\" name=\"a\" time=\"0.500000\"/>"));
  EXPECT_TRUE(Has(x, "<failure message=\"max_abs=1\" type=\"tolerance\">why</failure>"));
  EXPECT_TRUE(Has(x, "<skipped message=\"sequence\"/>"));
  EXPECT_TRUE(Has(x, "<error message=\"crashed\" type=\"runtime\"/>"));
}

TEST(JUnit, EscapesMarkupAndCharactersXmlCannotCarry) {
  JUnitSuite s;
  s.name = "s";
  s.timestamp = "2026-01-02T03:04:05";
  s.cases = {{"a&b", "x<y>\"'\x01", 0, JUnitOutcome::kFailure, "t", "m\nn", "1 < 2 & 3\nok"}};
  std::string x = RenderJUnit("onnxprobe", {s});
  EXPECT_TRUE(Has(x, "classname=\"a&amp;b\" name=\"x&lt;y&gt;&quot;&apos;\xEF\xBF\xBD\""));
  EXPECT_TRUE(Has(x, "message=\"m&#10;n\""));
  EXPECT_TRUE(Has(x, ">1 &lt; 2 &amp; 3\nok</failure>"));
  EXPECT_FALSE(Has(x, "\x01"));
}

TensorResult Row(const std::string& name, bool pass, double ratio, double max_abs) {
  TensorResult r;
  r.name = name;
  r.pass = pass;
  r.tolerance_ratio = ratio;
  r.metrics.max_abs = max_abs;
  r.metrics.max_rel = max_abs / 10;
  r.metrics.shape_match = r.metrics.dtype_match = true;
  return r;
}

TEST(JUnit, AComparisonIsOneSuiteWithACasePerTensor) {
  CompareReport rep;
  rep.comparison.rows = {Row("t0", true, 0.1, 1e-6), Row("t1", false, 7, 0.5)};
  TensorResult skipped = Row("t2", true, 0, 0);
  skipped.state = RowState::kNotCompared;
  skipped.reason = "a sequence";
  rep.comparison.rows.push_back(skipped);
  JUnitSuite s = JUnitSuiteFor(rep, "seed-0", "m.onnx", "seed-0/", {{"t1", 0.75}});
  ASSERT_EQ(s.cases.size(), 3u);
  EXPECT_EQ(s.cases[0].name, "seed-0/t0");
  EXPECT_EQ(s.cases[0].outcome, JUnitOutcome::kPassed);
  EXPECT_EQ(s.cases[1].outcome, JUnitOutcome::kFailure);
  EXPECT_EQ(s.cases[1].type, "tolerance");
  EXPECT_DOUBLE_EQ(s.cases[1].seconds, 0.75);
  EXPECT_TRUE(Has(s.cases[1].message, "max_abs=0.5 "));
  EXPECT_EQ(s.cases[2].outcome, JUnitOutcome::kSkipped);
  EXPECT_EQ(s.cases[2].message, "a sequence");
}

TEST(AggregateSamples, WorstByToleranceRatioAndMeansOverComparedRows) {
  ComparisonResult a, b, c;
  a.rows = {Row("y", true, 0.5, 0.1)};
  b.rows = {Row("y", false, 3, 0.3)};
  c.rows = {Row("y", false, 2, 0.8)};  // larger error, smaller ratio: not the worst sample
  TensorResult nc = Row("y", true, 0, 0);
  nc.state = RowState::kNotCompared;
  ComparisonResult d;
  d.rows = {nc};
  auto agg = AggregateSamples({{"a", &a}, {"b", &b}, {"c", &c}, {"d", &d}});
  ASSERT_EQ(agg.size(), 1u);
  EXPECT_EQ(agg[0].samples, 3u);
  EXPECT_EQ(agg[0].failures, 2u);
  EXPECT_EQ(agg[0].worst_sample, "b");
  EXPECT_DOUBLE_EQ(agg[0].worst_max_abs, 0.8);  // but the largest error, whichever sample has it
  EXPECT_DOUBLE_EQ(agg[0].mean_max_abs, (0.1 + 0.3 + 0.8) / 3);
}

}  // namespace
}  // namespace onnxprobe
