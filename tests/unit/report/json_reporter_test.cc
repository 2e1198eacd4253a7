// The JSON reporter on a hand-built report, read back with the project's JSON parser.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "onnxprobe/common/json_value.h"
#include "onnxprobe/report/report.h"
#include "synthetic_report.h"

namespace onnxprobe {
namespace {

JsonValue Parse(const CompareReport& r) {
  std::string text = MakeJsonReporter()->Render(r);
  auto v = ParseJson(text, "report");
  EXPECT_TRUE(v.ok()) << v.status().message() << "\n" << text;
  return v.ok() ? std::move(*v) : JsonValue();
}

const JsonValue& At(const JsonValue& v, const std::string& path) {
  static const JsonValue kMissing;
  const JsonValue* cur = &v;
  std::stringstream ss(path);
  std::string key;
  while (std::getline(ss, key, '.')) {
    cur = cur->Find(key);
    if (cur == nullptr) {
      ADD_FAILURE() << "no " << path;
      return kMissing;
    }
  }
  return *cur;
}

std::vector<std::string> Strings(const JsonValue& v) {
  std::vector<std::string> out;
  for (const auto& x : v.items()) out.push_back(x.as_string());
  return out;
}

TEST(JsonReporter, SummaryLeadsWithFirstDifferenceAndClosestRows) {
  JsonValue j = Parse(synthetic::MakeReport());
  EXPECT_EQ(At(j, "schema").as_string(), "onnxprobe-compare");
  EXPECT_EQ(At(j, "verdict").as_string(), "FAIL");
  EXPECT_FALSE(At(j, "aborted").as_bool());
  EXPECT_EQ(At(j, "summary.first_difference").as_string(), "t5");
  EXPECT_EQ(At(j, "summary.first_divergence").as_string(), "t20");
  EXPECT_EQ(Strings(At(j, "summary.frontier")), std::vector<std::string>{"t20"});
  EXPECT_EQ(At(j, "summary.compared").as_number(), 30);
  EXPECT_EQ(At(j, "summary.failed").as_number(), 2);
  EXPECT_TRUE(At(j, "summary.frontier_from_graph").as_bool());
  const auto& closest = At(j, "summary.closest_to_tolerance").items();
  ASSERT_EQ(closest.size(), 5u);
  const std::vector<std::pair<std::string, double>> want = {
      {"t20", 7}, {"t21", 3}, {"t10", 0.9}, {"t5", 0.3}};
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(At(closest[i], "name").as_string(), want[i].first);
    EXPECT_DOUBLE_EQ(At(closest[i], "tolerance_ratio").as_number(), want[i].second);
    EXPECT_EQ(At(closest[i], "index").as_number(), std::stoi(want[i].first.substr(1)));
  }
  EXPECT_EQ(At(closest[4], "tolerance_ratio").as_number(), 0);
}

TEST(JsonReporter, EveryRowCarriesItsStateVerdictAndRole) {
  JsonValue j = Parse(synthetic::MakeReport());
  const auto& rows = At(j, "tensors").items();
  ASSERT_EQ(rows.size(), 30u);
  for (size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(At(rows[i], "name").as_string(), "t" + std::to_string(i));
    EXPECT_EQ(At(rows[i], "index").as_number(), double(i));
  }
  EXPECT_EQ(At(rows[0], "state").as_string(), "compared");
  EXPECT_EQ(At(rows[0], "verdict").as_string(), "PASS");
  EXPECT_EQ(At(rows[0], "role").as_string(), "pass");
  EXPECT_EQ(At(rows[12], "state").as_string(), "not-compared");
  EXPECT_EQ(At(rows[12], "reason").as_string(), "a sequence, not a tensor");
  EXPECT_EQ(At(rows[14], "state").as_string(), "advisory");
  EXPECT_EQ(At(rows[14], "verdict").as_string(), "PASS");
  EXPECT_FALSE(At(rows[14], "within_tolerance").as_bool());
  EXPECT_EQ(At(rows[14], "tolerance_ratio").as_number(), 100);
  EXPECT_EQ(At(rows[20], "verdict").as_string(), "FAIL");
  EXPECT_EQ(At(rows[20], "role").as_string(), "introduced");
  EXPECT_EQ(At(rows[20], "grade").as_string(), "high-risk");
  EXPECT_EQ(At(rows[21], "role").as_string(), "inherited");
  EXPECT_DOUBLE_EQ(At(rows[5], "max_abs").as_number(), 2.5e-7);
}

TEST(JsonReporter, InputsAndOriginNote) {
  CompareReport rep = synthetic::MakeReport();
  rep.comparison.frontier.clear();
  rep.comparison.rows[20].role = Role::kInherited;
  rep.origin_note = "accumulated over several nodes";
  JsonValue j = Parse(rep);
  const auto& inputs = At(j, "inputs").items();
  ASSERT_EQ(inputs.size(), 1u);
  EXPECT_EQ(At(inputs[0], "name").as_string(), "input");
  EXPECT_EQ(At(inputs[0], "type").as_string(), "float32[1, 3, 8, 8]");
  EXPECT_EQ(At(j, "input_seed").as_number(), 42);
  EXPECT_EQ(At(j, "input_origin").as_string(), "generated");
  EXPECT_EQ(At(j, "summary.origin_note").as_string(), "accumulated over several nodes");
  EXPECT_TRUE(At(j, "summary.frontier").items().empty());
}

TEST(JsonReporter, AnAbortedComparisonIsAnError) {
  CompareReport rep = synthetic::MakeReport();
  rep.comparison.rows.resize(3);
  rep.comparison.failures = 0;
  rep.comparison.first_failure = -1;
  rep.comparison.first_difference = -1;
  rep.comparison.frontier.clear();
  rep.comparison.aborted = true;
  rep.comparison.abort_status = BackendError("side B: the runtime failed");
  JsonValue j = Parse(rep);
  EXPECT_EQ(At(j, "verdict").as_string(), "ERROR");
  EXPECT_TRUE(At(j, "aborted").as_bool());
  EXPECT_EQ(At(j, "abort_reason").as_string(), "side B: the runtime failed");
  EXPECT_EQ(At(j, "tensors").items().size(), 3u);
  EXPECT_EQ(At(j, "summary.first_difference").type(), JsonValue::Type::kNull);
  EXPECT_EQ(At(j, "summary.first_divergence").type(), JsonValue::Type::kNull);
}

TEST(JsonReporter, NonFiniteNumbersStayValidJson) {
  CompareReport rep = synthetic::MakeReport();
  rep.comparison.rows[3].tolerance_ratio = INFINITY;  // a shape mismatch
  rep.comparison.rows[3].metrics.snr_db = INFINITY;   // identical tensors
  JsonValue j = Parse(rep);
  const JsonValue& row = At(j, "tensors").items()[3];
  EXPECT_EQ(At(row, "snr_db").type(), JsonValue::Type::kNull);
  EXPECT_EQ(At(row, "tolerance_ratio").type(), JsonValue::Type::kNull);
}

TEST(WriteReport, WritesTheRenderedReport) {
  CompareReport rep = synthetic::MakeReport();
  std::string path = ::testing::TempDir() + "/json_reporter_test.json";
  auto reporter = MakeJsonReporter();
  ASSERT_TRUE(WriteReport(*reporter, rep, path).ok());
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  EXPECT_EQ(ss.str(), reporter->Render(rep));
}

}  // namespace
}  // namespace onnxprobe
