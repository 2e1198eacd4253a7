// RunBisection on in-memory sides: the first failing tensor of a long chain in a few small runs,
// then every tensor compared, so a fault whose error fades before the outputs is not missed.
#include <gtest/gtest.h>

#include <functional>

#include "../fake_side.h"
#include "onnxprobe/engine/comparison.h"

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
  // one file per test: ctest runs this binary's tests in parallel processes
  std::string path = ::testing::TempDir() + "/bisect_chain_" +
                     ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".onnx";
  auto m = BuildModel(path, nodes, {"x"}, {T(kChain - 1)});
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
  EXPECT_EQ(r->frontier, std::vector<int>{37});
  // the search: probes 16 32 48, then 37 41 45, then 34 35 36 (t36 passes next to t37)
  EXPECT_EQ(r->bisect_rounds, 3u);
  ASSERT_EQ(a.fetch_log().size(), 4u);  // three search rounds, then one sweep of the rest
  EXPECT_EQ(a.fetch_log()[0], (std::vector<std::string>{T(16), T(32), T(48)}));
  EXPECT_EQ(a.fetch_log()[1], (std::vector<std::string>{T(37), T(41), T(45)}));
  EXPECT_EQ(a.fetch_log()[2], (std::vector<std::string>{T(34), T(35), T(36)}));
  EXPECT_EQ(a.fetch_log()[3].size(), static_cast<size_t>(kChain) - 9);
  EXPECT_EQ(r->batches, 4u);
  // then every tensor is compared, each fetched once: the full comparison's rows and verdict
  EXPECT_EQ(a.fetched_tensors(), static_cast<size_t>(kChain));
  ASSERT_EQ(r->rows.size(), static_cast<size_t>(kChain));
  for (int i = 0; i < kChain; ++i) EXPECT_EQ(r->rows[i].name, T(i));
  EXPECT_EQ(r->failures, static_cast<size_t>(kChain - 37));
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

// Issue 10: `--bisect` answered PASS where the full comparison fails, for a fault whose error
// vanishes downstream (here t20..t23 fail, everything after passes again): the search probes
// 16, 32, 48 and then only past 48. The rest of the tensors are now compared after the search,
// so both answers agree.
TEST(RunBisection, AFaultThatFadesDownstreamIsFoundLikeTheFullComparison) {
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
  EXPECT_EQ(r->failures, 4u);
  EXPECT_EQ(r->first_failure, 20);
  EXPECT_EQ(r->frontier, std::vector<int>{20});
  EXPECT_EQ(r->frontier, full->frontier);
  ASSERT_EQ(r->rows.size(), full->rows.size());
  for (size_t i = 0; i < r->rows.size(); ++i) {
    EXPECT_EQ(r->rows[i].name, full->rows[i].name);
    EXPECT_EQ(r->rows[i].pass, full->rows[i].pass) << r->rows[i].name;
    EXPECT_EQ(r->rows[i].role, full->rows[i].role) << r->rows[i].name;
  }
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
