// RunBisection on in-memory sides: the first failing tensor of a long chain with few runs, and
// what it answers when the error fades before the outputs.
#include <gtest/gtest.h>

#include <functional>

#include "../fake_side.h"
#include "onnxprobe/comparison.h"

namespace onnxprobe {
namespace {

using fake::BuildModel;
using fake::FakeSide;
using fake::GraphNode;
using fake::MakeF32;

constexpr int kChain = 64;

std::string T(int i) { return "t" + std::to_string(i); }
std::string N(int i) { return "N" + std::to_string(i); }

// x -> N0 -> t0 -> N1 -> t1 -> ... -> t63
Model Chain() {
  std::vector<GraphNode> nodes;
  for (int i = 0; i < kChain; ++i) nodes.push_back({N(i), "Relu", {i ? T(i - 1) : "x"}, {T(i)}});
  auto m = BuildModel(::testing::TempDir() + "/bisect_chain.onnx", nodes, {"x"}, {T(kChain - 1)});
  EXPECT_TRUE(m.ok()) << m.status().message();
  return std::move(*m);
}

// Side B differs (beyond any tolerance) from side A at the tensors `wrong` says.
void Fill(FakeSide* a, FakeSide* b, const std::function<bool(int)>& wrong) {
  for (int i = 0; i < kChain; ++i) {
    a->Add(T(i), N(i), "Relu", MakeF32({4}, {1, 2, 3, 4}));
    b->Add(T(i), N(i), "Relu", MakeF32({4}, {1, 2, 3, wrong(i) ? 5.f : 4.f}));
  }
}

CompareJob Job() {
  CompareJob job;
  job.policy.global = Tolerance{1e-3, 1e-3, false};
  return job;
}

TEST(RunBisection, FindsTheFirstFailureOfALongChainInFewRuns) {
  Model m = Chain();
  FakeSide a("A"), b("B");
  Fill(&a, &b, [](int i) { return i >= 37; });
  a.SetModel(&m);
  const size_t per_run = 3;
  auto r = RunBisection(a, b, Job(), per_run);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->bisected);
  ASSERT_GE(r->first_failure, 0);
  EXPECT_EQ(r->rows[r->first_failure].name, T(37));
  EXPECT_EQ(r->rows[r->first_failure].role, Role::kIntroduced);
  ASSERT_EQ(r->frontier.size(), 1u);
  EXPECT_EQ(r->rows[r->frontier[0]].name, T(37));
  // t36 must have been probed and passed, or t37 could not be called the first failure
  bool saw_36 = false;
  for (const auto& row : r->rows) {
    if (row.name == T(36)) saw_36 = row.pass;
  }
  EXPECT_TRUE(saw_36);
  // a 4-ary search over 64 tensors narrows to one in ceil(log4 64) = 3 rounds; allow one more
  // round for the neighbour and one for the walk up the graph
  EXPECT_LE(a.fetches(), 5u);
  EXPECT_EQ(a.fetches(), r->bisect_rounds);
  EXPECT_LE(a.fetched_tensors(), per_run * a.fetches());
  EXPECT_LT(a.fetched_tensors(), static_cast<size_t>(kChain));
  EXPECT_EQ(r->rows.size(), a.fetched_tensors());
  for (const auto& names : a.fetch_log()) EXPECT_LE(names.size(), per_run);
}

TEST(RunBisection, MemoryBudgetCapsTensorsPerRun) {
  Model m = Chain();
  FakeSide a("A"), b("B");
  Fill(&a, &b, [](int i) { return i >= 10; });
  a.SetModel(&m);
  CompareJob job = Job();
  job.max_memory = 2 * 16 * 2;  // two pairs of 16-byte tensors
  auto r = RunBisection(a, b, job, 8);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_GE(r->first_failure, 0);
  EXPECT_EQ(r->rows[r->first_failure].name, T(10));
  for (const auto& names : a.fetch_log()) EXPECT_LE(names.size(), 2u);
}

// Known limitation (issue 10: `--bisect` answered PASS where the full comparison fails). The
// search assumes error, once introduced, persists downstream; a fault whose error vanishes
// before the probes (here t20..t23 fail, everything after passes again) is never seen. This
// test pins today's answer; when issue 10 makes bisection agree with the full comparison, it
// must change to expect t20.
TEST(RunBisection, KnownLimitationAFaultThatFadesDownstreamIsMissed) {
  Model m = Chain();
  auto fades = [](int i) { return i >= 20 && i <= 23; };
  FakeSide fa("A"), fb("B");
  Fill(&fa, &fb, fades);
  fa.SetModel(&m);
  auto full = RunComparison(fa, fb, Job());
  ASSERT_TRUE(full.ok());
  EXPECT_EQ(full->failures, 4u);
  EXPECT_EQ(full->rows[full->first_failure].name, T(20));

  FakeSide a("A"), b("B");
  Fill(&a, &b, fades);
  a.SetModel(&m);
  auto r = RunBisection(a, b, Job(), 3);
  ASSERT_TRUE(r.ok()) << r.status().message();
  // the probes (16, 32, 48, then only past 48) never land in 20..23
  EXPECT_EQ(r->failures, 0u);
  EXPECT_EQ(r->first_failure, -1);
}

TEST(RunBisection, ASideFailingMidwayAborts) {
  Model m = Chain();
  FakeSide a("A"), b("B");
  Fill(&a, &b, [](int i) { return i >= 37; });
  a.SetModel(&m);
  a.FailOnFetch(2, IoError("dump file vanished"));
  auto r = RunBisection(a, b, Job(), 3);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->aborted);
  EXPECT_EQ(r->abort_status.code(), ErrorCode::kIoError);
  EXPECT_EQ(r->rows.size(), 3u);  // the first round's probes
}

}  // namespace
}  // namespace onnxprobe
