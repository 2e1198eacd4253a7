// The console reporter on a hand-built report: what it leads with (first difference, tensors
// closest to tolerance, verdict), the origin note when nothing introduces the error, and the
// row window around the first divergence.
#include <gtest/gtest.h>

#include "onnxprobe/report/report.h"
#include "synthetic_report.h"

namespace onnxprobe {
namespace {

bool Has(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// The table line of row `i` (index column, then the name).
bool HasRow(const std::string& out, size_t i) {
  char prefix[32];
  std::snprintf(prefix, sizeof(prefix), "\n%5zu  t%zu ", i, i);
  return Has(out, prefix);
}

std::string Render(const CompareReport& r, ConsoleOptions o = ConsoleOptions()) {
  return MakeConsoleReporter(o)->Render(r);
}

TEST(ClosestToTolerance, ComparedRowsByRatioAdvisoryAndNotComparedLeftOut) {
  CompareReport rep = synthetic::MakeReport();
  EXPECT_EQ(ClosestToTolerance(rep.comparison, 3), (std::vector<int>{20, 21, 10}));
  EXPECT_EQ(ClosestToTolerance(rep.comparison, 4), (std::vector<int>{20, 21, 10, 5}));
  // 30 rows less one not compared and one advisory
  EXPECT_EQ(ClosestToTolerance(rep.comparison, 100).size(), 28u);
}

TEST(ConsoleReporter, LeadsWithTheFirstDifferenceClosestRowsAndVerdict) {
  CompareReport rep = synthetic::MakeReport();
  std::string out = Render(rep, ConsoleOptions{false, 8, 100, false});
  EXPECT_TRUE(Has(out,
                  "first difference: t5 (Conv node N5), max abs 2.5e-07; bit-exact before it "
                  "(5 tensors)"))
      << out;
  // a FAIL's rows past tolerance are not "closest to" it
  EXPECT_TRUE(Has(out, "largest error / allowed: t20 7; t21 3; t10 0.9\n")) << out;
  EXPECT_FALSE(Has(out, "closest to tolerance")) << out;
  EXPECT_TRUE(Has(out, "verdict: FAIL\n")) << out;
  EXPECT_TRUE(Has(out, "first divergence: t20 (Conv node N20): 3 of 16 elements")) << out;
  EXPECT_TRUE(Has(out, "error introduced at:\n  N20 (Conv) -> t20")) << out;
  EXPECT_TRUE(Has(out, "1 failing tensors only inherit that error")) << out;
  EXPECT_TRUE(Has(out, "compared 30 tensors: 28 passed, 2 failed")) << out;
  EXPECT_FALSE(Has(out, "where the error is born")) << out;
  for (size_t i = 0; i < 30; ++i) EXPECT_TRUE(HasRow(out, i)) << i;  // all rows fit
  EXPECT_FALSE(Has(out, "\033[")) << "no color unless asked";
}

TEST(ConsoleReporter, AFailWithoutAnIntroducedRowSaysWhereTheErrorIsBorn) {
  CompareReport rep = synthetic::MakeReport();
  rep.comparison.rows[20].role = Role::kInherited;
  rep.comparison.frontier.clear();
  rep.origin_note = "the error accumulates over several nodes";
  std::string out = Render(rep);
  EXPECT_TRUE(Has(out, "verdict: FAIL")) << out;
  EXPECT_TRUE(Has(out, "where the error is born: the error accumulates over several nodes\n"))
      << out;
  EXPECT_FALSE(Has(out, "error introduced at")) << out;
}

TEST(ConsoleReporter, APassStillNamesTheFirstDifferenceAndClosestRows) {
  CompareReport rep = synthetic::MakeReport();
  ComparisonResult& r = rep.comparison;
  for (int i : {20, 21}) {
    r.rows[i].pass = r.rows[i].within_tolerance = true;
    r.rows[i].role = Role::kPass;
    r.rows[i].tolerance_ratio = 0.5;
    r.rows[i].grade = Grade::kExcellent;
  }
  r.failures = 0;
  r.first_failure = -1;
  r.frontier.clear();
  std::string out = Render(rep);
  EXPECT_TRUE(Has(out, "verdict: PASS")) << out;
  EXPECT_TRUE(Has(out, "first difference: t5 ")) << out;
  EXPECT_TRUE(Has(out, "closest to tolerance (error / allowed): t10 0.9; t20 0.5; t21 0.5\n"))
      << out;
}

TEST(ConsoleReporter, BitExactSaysSo) {
  CompareReport rep = synthetic::MakeReport();
  ComparisonResult& r = rep.comparison;
  for (auto& t : r.rows) {
    t = r.rows[0];
  }
  r.failures = 0;
  r.first_failure = r.first_difference = -1;
  r.frontier.clear();
  std::string out = Render(rep);
  EXPECT_TRUE(Has(out, "bit-exact: every compared tensor is identical on both sides")) << out;
  EXPECT_FALSE(Has(out, "closest to tolerance")) << out;  // every ratio is 0
}

TEST(ConsoleReporter, TheRowWindowHoldsTheFirstDivergence) {
  CompareReport rep = synthetic::MakeReport();
  // fewer rows than the context asks for around the divergence
  std::string out = Render(rep, ConsoleOptions{false, 8, 4, false});
  EXPECT_TRUE(HasRow(out, 20)) << out;
  size_t shown = 0;
  for (size_t i = 0; i < 30; ++i) shown += HasRow(out, i);
  EXPECT_EQ(shown, 4u) << out;
  EXPECT_FALSE(HasRow(out, 5)) << out;

  std::string one = Render(rep, ConsoleOptions{false, 8, 1, false});
  EXPECT_TRUE(HasRow(one, 20)) << one;
  EXPECT_FALSE(HasRow(one, 19)) << one;
  EXPECT_TRUE(Has(one, "  ... 20 rows before\n")) << one;
  EXPECT_TRUE(Has(one, "  ... 9 more rows")) << one;

  // no failure: the window holds the first difference
  rep.comparison.first_failure = -1;
  std::string pass = Render(rep, ConsoleOptions{false, 8, 3, false});
  EXPECT_TRUE(HasRow(pass, 5)) << pass;
}

TEST(ConsoleReporter, QuietPrintsTheSummaryOnly) {
  CompareReport rep = synthetic::MakeReport();
  std::string out = Render(rep, ConsoleOptions{false, 8, 40, true});
  EXPECT_FALSE(HasRow(out, 20)) << out;
  EXPECT_TRUE(Has(out, "verdict: FAIL")) << out;
  EXPECT_TRUE(Has(out, "first difference: t5 ")) << out;
}

TEST(ConsoleReporter, LatencyNamesEachSidesRunsWhenTheyDiffer) {
  CompareReport rep = synthetic::MakeReport();
  for (SideResources* s : {&rep.resources_a, &rep.resources_b}) {
    s->measured = true;
    s->latency.runs = 3;
  }
  rep.resources_a.latency.median_ms = 250;
  rep.resources_b.latency.median_ms = 1.5;
  EXPECT_TRUE(Has(Render(rep), "latency: A 250 ms, B 1.5 ms (median of 3 runs)"));
  // slow runs stop early (CompareRequest::latency_max_ms): each side says how many it timed
  rep.resources_a.latency.runs = 1;
  EXPECT_TRUE(Has(Render(rep), "latency: A 250 ms (1 run), B 1.5 ms (median of 3 runs)"));
  rep.resources_b.latency.runs = 1;
  EXPECT_TRUE(Has(Render(rep), "latency: A 250 ms, B 1.5 ms (1 run)"));
}

// Against a PyTorch capture: counts by method, then the first few value-only pairs and unaligned
// module outputs with a count of the rest (never one line per value match); values recorded
// inside a call that found no counterpart are not listed as unaligned.
TEST(ConsoleReporter, AlignmentSummaryNamesAFewOfEachKind) {
  CompareReport rep = synthetic::MakeReport();
  auto add = [&](const std::string& name, AlignMethod m, bool inside = false) {
    AlignmentRow a;
    a.torch_name = name;
    a.method = m;
    a.inside = inside;
    rep.alignment.push_back(a);
  };
  add("conv1", AlignMethod::kScope);
  for (int i = 0; i < 6; ++i) add("blocks." + std::to_string(i), AlignMethod::kValue);
  add("head", AlignMethod::kNone);
  add("attn.softmax_0", AlignMethod::kNone, true);
  std::string out = Render(rep, ConsoleOptions{false, 8, 40, true});  // quiet: no full table
  EXPECT_TRUE(Has(out, "alignment of 9 PyTorch activations: 2 none, 1 scope, 6 value")) << out;
  EXPECT_TRUE(Has(out,
                  "paired by value alone (advisory: never a failure or a culprit): blocks.0, "
                  "blocks.1, blocks.2, blocks.3 and 2 more\n"))
      << out;
  EXPECT_TRUE(Has(out, "unaligned (module outputs and arguments): head\n")) << out;
  EXPECT_FALSE(Has(out, "blocks.4")) << out;
  EXPECT_FALSE(Has(out, "attn.softmax_0")) << out;
  // without a PyTorch side there is no alignment line at all
  rep.alignment.clear();
  EXPECT_FALSE(Has(Render(rep), "alignment of"));
}

TEST(ConsoleReporter, AnAbortedComparisonKeepsItsRows) {
  CompareReport rep = synthetic::MakeReport();
  ComparisonResult& r = rep.comparison;
  r.rows.resize(8);
  r.failures = 0;
  r.first_failure = -1;
  r.frontier.clear();
  r.aborted = true;
  r.abort_status = BackendError("side B: the runtime failed");
  std::string out = Render(rep);
  EXPECT_TRUE(Has(out, "ABORTED after 8 compared tensors")) << out;
  EXPECT_TRUE(HasRow(out, 7)) << out;
  EXPECT_FALSE(Has(out, "verdict: PASS")) << out;
}

}  // namespace
}  // namespace onnxprobe
