// The JSON reporter on a hand-built report, read back with the project's JSON parser.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "onnxprobe/common/json.h"
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

// A compact document keeps every measurement for the rows a reader acts on and a summary of
// the rest; a full one keeps everything. The synthetic report: t20 introduced, t21 inherited,
// t14 advisory beyond tolerance, t5 the first difference; t29 made a graph output here.
TEST(JsonReporter, CompactRowsSummarizeWhatPassesOffEveryPath) {
  CompareReport rep = synthetic::MakeReport();
  rep.graph_outputs = {"t29"};
  auto compact = ParseJson(MakeJsonReporter(ReportDetail::kCompact)->Render(rep), "compact");
  auto full = ParseJson(MakeJsonReporter(ReportDetail::kFull)->Render(rep), "full");
  ASSERT_TRUE(compact.ok() && full.ok());
  EXPECT_EQ(At(*compact, "report_detail").as_string(), "compact");
  EXPECT_EQ(At(*full, "report_detail").as_string(), "full");
  EXPECT_EQ(Strings(At(*compact, "graph_outputs")), std::vector<std::string>{"t29"});
  const auto& rows = At(*compact, "tensors").items();
  const auto& all = At(*full, "tensors").items();
  ASSERT_EQ(rows.size(), all.size());
  std::set<size_t> kept = {5, 14, 20, 21, 29};
  for (size_t i = 0; i < rows.size(); ++i) {
    bool in_full = kept.count(i) > 0;
    EXPECT_EQ(At(rows[i], "detail").as_string(), in_full ? "full" : "summary") << i;
    EXPECT_EQ(At(all[i], "detail").as_string(), "full");
    EXPECT_EQ(rows[i].Find("stats_a") != nullptr, in_full) << i;
    EXPECT_NE(all[i].Find("abs_histogram"), nullptr);
    // what the summary keeps equals the full row's
    for (const char* key : {"name", "verdict", "role", "state", "op_type"})
      EXPECT_EQ(At(rows[i], key).as_string(), At(all[i], key).as_string()) << key;
    for (const char* key : {"max_abs", "max_rel", "tolerance_ratio", "count", "mismatches"})
      EXPECT_EQ(At(rows[i], key).as_number(), At(all[i], key).as_number()) << key;
  }
}

TEST(JsonReporter, CompactRowsKeepTheChannelsWithTheMostMismatches) {
  CompareReport rep = synthetic::MakeReport();
  auto& channels = rep.comparison.rows[20].metrics.channels;
  channels.clear();
  for (int c = 0; c < 300; ++c)  // channel c has c % 97 mismatches: 96, 193, 290 lead
    channels.push_back({c, 1e-3 * c, 1e-4, static_cast<uint64_t>(c % 97)});
  auto compact = ParseJson(MakeJsonReporter(ReportDetail::kCompact)->Render(rep), "compact");
  auto full = ParseJson(MakeJsonReporter(ReportDetail::kFull)->Render(rep), "full");
  ASSERT_TRUE(compact.ok() && full.ok());
  const JsonValue& row = At(*compact, "tensors").items()[20];
  EXPECT_EQ(At(row, "channels_total").as_number(), 300);
  const auto& kept = At(row, "channels").items();
  ASSERT_EQ(kept.size(), 64u);
  std::vector<int> want;  // the 64 largest mismatch counts (ties: the larger max_abs), by channel
  std::vector<int> order(300);
  for (int c = 0; c < 300; ++c) order[c] = c;
  std::sort(order.begin(), order.end(),
            [](int x, int y) { return x % 97 != y % 97 ? x % 97 > y % 97 : x > y; });
  want.assign(order.begin(), order.begin() + 64);
  std::sort(want.begin(), want.end());
  for (size_t k = 0; k < kept.size(); ++k) EXPECT_EQ(kept[k].items()[0].as_number(), want[k]);
  const JsonValue& whole = At(*full, "tensors").items()[20];
  EXPECT_EQ(whole.Find("channels_total"), nullptr);
  EXPECT_EQ(At(whole, "channels").items().size(), 300u);
}

TEST(JsonWriter, FlatArraysStayOnOneLineInAPrettyDocument) {
  JsonWriter j;
  j.BeginObject().Key("h").BeginFlatArray().UInt(1).UInt(2);
  j.BeginArray().Int(3).Number(0.5).EndArray().EndArray();
  j.Key("after").BeginArray().Int(4).EndArray().EndObject();
  EXPECT_EQ(j.str(), "{\n  \"h\": [1, 2, [3, 0.5]],\n  \"after\": [\n    4\n  ]\n}");
  JsonWriter tight(false);
  tight.BeginFlatArray().UInt(1).BeginArray().UInt(2).EndArray().EndArray();
  EXPECT_EQ(tight.str(), "[1,[2]]");
}

}  // namespace
}  // namespace onnxprobe
