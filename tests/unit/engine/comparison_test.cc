// RunComparison on in-memory sides: roles, frontier, first failure and first difference,
// not-compared and advisory rows, a side failing mid-way, batching under a memory budget.
#include "onnxprobe/engine/comparison.h"

#include <gtest/gtest.h>

#include <cctype>

#include "../fake_side.h"

namespace onnxprobe {
namespace {

using fake::BuildModel;
using fake::FakeSide;
using fake::GraphNode;
using fake::MakeF32;

const std::vector<float> kRef = {1, 2, 3, 4};

// atol 1e-3 and rtol 1e-3, not scaled: an element of value v passes within 1e-3 + 1e-3*v.
CompareJob PlainJob() {
  CompareJob job;
  job.policy.global = Tolerance{1e-3, 1e-3, false};
  return job;
}

std::string TempPath(const std::string& name) { return ::testing::TempDir() + "/" + name; }

// x -> A -> a -> B -> b -> C -> c -> D -> d
Model ChainModel(const std::vector<std::string>& names) {
  std::vector<GraphNode> nodes;
  std::string prev = "x";
  for (const auto& n : names) {
    std::string node = n;
    node[0] = static_cast<char>(std::toupper(node[0]));
    nodes.push_back({node, "Relu", {prev}, {n}});
    prev = n;
  }
  auto m =
      BuildModel(TempPath("chain_" + std::to_string(names.size()) + ".onnx"), nodes, {"x"}, {prev});
  EXPECT_TRUE(m.ok()) << m.status().message();
  return std::move(*m);
}

std::string NodeOf(const std::string& t) {
  std::string n = t;
  n[0] = static_cast<char>(std::toupper(n[0]));
  return n;
}

// Side A holds kRef for every name; side B holds kRef changed as `b_values` says.
void Fill(FakeSide* a, FakeSide* b, const std::vector<std::string>& names,
          const std::map<std::string, std::vector<float>>& b_values) {
  for (const auto& n : names) {
    a->Add(n, NodeOf(n), "Relu", MakeF32({1, 4}, kRef));
    auto it = b_values.find(n);
    b->Add(n, NodeOf(n), "Relu", MakeF32({1, 4}, it == b_values.end() ? kRef : it->second));
  }
}

std::vector<Role> Roles(const ComparisonResult& r) {
  std::vector<Role> out;
  for (const auto& row : r.rows) out.push_back(row.role);
  return out;
}

TEST(RunComparison, ChainMarksTheFaultIntroducedAndWhatFollowsInherited) {
  const std::vector<std::string> names = {"a", "b", "c", "d"};
  Model m = ChainModel(names);
  FakeSide a("A"), b("B");
  // b: 2 -> 2.000001, |d| ~1e-6 against an allowed 3e-3 (not bit-exact, within tolerance);
  // c and d: 3 -> 3.5, |d| 0.5 against an allowed 4e-3
  Fill(&a, &b, names,
       {{"b", {1, 2.000001f, 3, 4}}, {"c", {1, 2, 3.5f, 4}}, {"d", {1, 2, 3.5f, 4}}});
  a.SetModel(&m);
  auto r = RunComparison(a, b, PlainJob());
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->rows.size(), 4u);
  EXPECT_EQ(Roles(*r),
            (std::vector<Role>{Role::kPass, Role::kPass, Role::kIntroduced, Role::kInherited}));
  EXPECT_EQ(r->frontier, std::vector<int>{2});
  EXPECT_TRUE(r->frontier_from_graph);
  EXPECT_EQ(r->first_failure, 2);
  EXPECT_EQ(r->first_difference, 1);
  EXPECT_EQ(r->failures, 2u);
  EXPECT_TRUE(r->rows[1].pass);
  EXPECT_FALSE(r->rows[2].pass);
  EXPECT_EQ(r->rows[2].node, "C");
  EXPECT_EQ(r->rows[2].metrics.max_abs, 0.5);
  EXPECT_FALSE(r->aborted);
  EXPECT_EQ(r->batches, 1u);
  EXPECT_EQ(a.runs(), 1u);
  EXPECT_EQ(b.runs(), 1u);
}

TEST(RunComparison, WithoutAGraphOnlyTheFirstFailureIsIntroduced) {
  const std::vector<std::string> names = {"a", "b", "c", "d"};
  FakeSide a("A"), b("B");
  Fill(&a, &b, names, {{"b", {1, 2.5f, 3, 4}}, {"c", {1, 2, 3.5f, 4}}, {"d", {1, 2, 3.5f, 4}}});
  auto r = RunComparison(a, b, PlainJob());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Roles(*r), (std::vector<Role>{Role::kPass, Role::kIntroduced, Role::kInherited,
                                          Role::kInherited}));
  EXPECT_EQ(r->frontier, std::vector<int>{1});
  EXPECT_FALSE(r->frontier_from_graph);
  EXPECT_EQ(r->first_difference, 1);
}

TEST(RunComparison, BitExactSidesHaveNoDifference) {
  const std::vector<std::string> names = {"a", "b"};
  FakeSide a("A"), b("B");
  Fill(&a, &b, names, {});
  auto r = RunComparison(a, b, PlainJob());
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->first_difference, -1);
  EXPECT_EQ(r->first_failure, -1);
  EXPECT_EQ(r->failures, 0u);
  EXPECT_TRUE(r->frontier.empty());
}

TEST(RunComparison, TwoBranchesEachIntroducingErrorAreBothInTheFrontier) {
  // x -> P -> p; p -> L1 -> l1 -> L2 -> l2; p -> R1 -> r1 -> R2 -> r2; Add(l2, r2) -> out
  std::vector<GraphNode> nodes = {
      {"P", "Relu", {"x"}, {"p"}},    {"L1", "Relu", {"p"}, {"l1"}},
      {"L2", "Relu", {"l1"}, {"l2"}}, {"R1", "Relu", {"p"}, {"r1"}},
      {"R2", "Relu", {"r1"}, {"r2"}}, {"Out", "Add", {"l2", "r2"}, {"out"}}};
  auto m = BuildModel(TempPath("branches.onnx"), nodes, {"x"}, {"out"});
  ASSERT_TRUE(m.ok()) << m.status().message();
  FakeSide a("A"), b("B");
  const std::vector<float> bad = {1, 2, 3, 5};
  for (const auto& n : nodes) {
    const std::string& t = n.outputs[0];
    a.Add(t, n.name, n.op_type, MakeF32({1, 4}, kRef));
    bool wrong = t != "p";  // l1 and r1 make the error, the rest carry it
    b.Add(t, n.name, n.op_type, MakeF32({1, 4}, wrong ? bad : kRef));
  }
  b.SetModel(&*m);  // either side's graph serves
  auto r = RunComparison(a, b, PlainJob());
  ASSERT_TRUE(r.ok()) << r.status().message();
  // rows: p l1 l2 r1 r2 out
  EXPECT_EQ(Roles(*r), (std::vector<Role>{Role::kPass, Role::kIntroduced, Role::kInherited,
                                          Role::kIntroduced, Role::kInherited, Role::kInherited}));
  EXPECT_EQ(r->frontier, (std::vector<int>{1, 3}));
  EXPECT_EQ(r->failures, 5u);
  EXPECT_EQ(r->first_failure, 1);
}

TEST(RunComparison, NotComparedRowsNeverFail) {
  const std::vector<std::string> names = {"a", "b", "c"};
  FakeSide a("A"), b("B");
  a.Add("a", "A", "Relu", MakeF32({1, 4}, kRef));
  b.Add("a", "A", "Relu", MakeF32({1, 4}, kRef));
  a.Add("b", "B", "SequenceConstruct", MakeF32({1, 4}, kRef));
  b.AddSkipped("b", "B", "SequenceConstruct", "a sequence, not a tensor");
  a.Add("c", "C", "Relu", MakeF32({1, 4}, kRef));
  b.Add("c", "C", "Relu", MakeF32({1, 4}, kRef));
  auto r = RunComparison(a, b, PlainJob());
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->rows.size(), 3u);
  EXPECT_EQ(r->rows[1].state, RowState::kNotCompared);
  EXPECT_TRUE(r->rows[1].pass);
  EXPECT_EQ(r->rows[1].role, Role::kPass);
  EXPECT_EQ(r->rows[1].reason, "a sequence, not a tensor");
  EXPECT_EQ(r->rows[1].tolerance_ratio, 0);
  EXPECT_EQ(r->failures, 0u);
  EXPECT_EQ(r->first_difference, -1);  // a row without a value is no difference
}

// docs/metrics.md: a tensor is tainted when it fails, or when it was not compared and its
// producer reads a tainted tensor. b fails, c (its consumer) has no value, d reads c and fails:
// d only inherits b's error.
TEST(RunComparison, TaintFlowsThroughARowThatWasNotCompared) {
  const std::vector<std::string> names = {"a", "b", "c", "d"};
  Model m = ChainModel(names);
  FakeSide a("A"), b("B");
  const std::vector<float> bad = {1, 2, 3, 5};
  a.Add("a", "A", "Relu", MakeF32({1, 4}, kRef));
  b.Add("a", "A", "Relu", MakeF32({1, 4}, kRef));
  a.Add("b", "B", "Relu", MakeF32({1, 4}, kRef));
  b.Add("b", "B", "Relu", MakeF32({1, 4}, bad));
  a.AddSkipped("c", "C", "Relu", "not a tensor");
  b.Add("c", "C", "Relu", MakeF32({1, 4}, bad));
  a.Add("d", "D", "Relu", MakeF32({1, 4}, kRef));
  b.Add("d", "D", "Relu", MakeF32({1, 4}, bad));
  a.SetModel(&m);
  auto r = RunComparison(a, b, PlainJob());
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(Roles(*r),
            (std::vector<Role>{Role::kPass, Role::kIntroduced, Role::kPass, Role::kInherited}));
  EXPECT_EQ(r->frontier, std::vector<int>{1});
}

TEST(RunComparison, AdvisoryRowsAreMeasuredButPass) {
  const std::vector<std::string> names = {"a", "b", "c"};
  FakeSide a("A"), b("B");
  Fill(&a, &b, names, {{"b", {1, 2, 3.5f, 4}}});
  CompareJob job = PlainJob();
  job.advisory = {"b"};
  auto r = RunComparison(a, b, job);
  ASSERT_TRUE(r.ok()) << r.status().message();
  const TensorResult& row = r->rows[1];
  EXPECT_EQ(row.state, RowState::kAdvisory);
  EXPECT_TRUE(row.pass);
  EXPECT_FALSE(row.within_tolerance);
  EXPECT_EQ(row.metrics.max_abs, 0.5);
  EXPECT_DOUBLE_EQ(row.tolerance_ratio, 0.5 / (1e-3 + 1e-3 * 3));
  EXPECT_EQ(row.role, Role::kPass);
  EXPECT_EQ(r->failures, 0u);
  EXPECT_EQ(r->first_failure, -1);
  EXPECT_TRUE(r->frontier.empty());
  EXPECT_EQ(r->first_difference, 1);
}

// A value inside a module call ("b") fails only when a row confirming it (the call's output "c")
// fails too or uses more than half of its tolerance; otherwise it is advisory and the verdict is
// not touched.
TEST(RunComparison, AnUnconfirmedRowBecomesAdvisoryAConfirmedOneFails) {
  const std::vector<std::string> names = {"a", "b", "c"};
  {
    FakeSide a("A"), b("B");
    Fill(&a, &b, names, {{"b", {1, 2, 3.5f, 4}}});
    CompareJob job = PlainJob();
    job.confirm_by = {{"b", {"c"}}};
    auto r = RunComparison(a, b, job);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->rows[1].state, RowState::kAdvisory);
    EXPECT_TRUE(r->rows[1].pass);
    EXPECT_FALSE(r->rows[1].within_tolerance);
    EXPECT_NE(r->rows[1].reason.find("not confirmed"), std::string::npos) << r->rows[1].reason;
    EXPECT_EQ(r->failures, 0u);
    EXPECT_EQ(r->first_failure, -1);
  }
  {
    FakeSide a("A"), b("B");
    Fill(&a, &b, names, {{"b", {1, 2, 3.5f, 4}}, {"c", {1, 2, 3.5f, 4}}});
    CompareJob job = PlainJob();
    job.confirm_by = {{"b", {"c"}}};
    auto r = RunComparison(a, b, job);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_EQ(r->rows[1].state, RowState::kCompared);
    EXPECT_FALSE(r->rows[1].pass);
    EXPECT_EQ(r->failures, 2u);
    EXPECT_EQ(r->first_failure, 1);
  }
  {  // the call's output passes using 3/4 of its tolerance: it carries the error, confirms "b"
    FakeSide a("A"), b("B");
    Fill(&a, &b, names, {{"b", {1, 2, 3.5f, 4}}, {"c", {1, 2, 3.003f, 4}}});
    CompareJob job = PlainJob();
    job.confirm_by = {{"b", {"c"}}};
    auto r = RunComparison(a, b, job);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_TRUE(r->rows[2].pass);
    EXPECT_GT(r->rows[2].tolerance_ratio, 0.5);
    EXPECT_EQ(r->rows[1].state, RowState::kCompared);
    EXPECT_FALSE(r->rows[1].pass);
    EXPECT_EQ(r->failures, 1u);
  }
  {  // no confirming row was compared: judged as any structural pair
    FakeSide a("A"), b("B");
    Fill(&a, &b, names, {{"b", {1, 2, 3.5f, 4}}});
    CompareJob job = PlainJob();
    job.confirm_by = {{"b", {"not_compared"}}};
    auto r = RunComparison(a, b, job);
    ASSERT_TRUE(r.ok()) << r.status().message();
    EXPECT_FALSE(r->rows[1].pass);
    EXPECT_EQ(r->failures, 1u);
  }
}

TEST(RunComparison, ASideFailingMidwayKeepsTheRowsCompared) {
  const std::vector<std::string> names = {"a", "b", "c", "d"};
  FakeSide a("A"), b("B");
  Fill(&a, &b, names, {{"a", {1, 2, 3.5f, 4}}});
  b.FailOnFetch(2, BackendError("the runtime gave up"));
  CompareJob job = PlainJob();
  job.max_memory = 32;  // one pair of 16-byte tensors per run
  size_t callbacks = 0;
  auto r = RunComparison(a, b, job, [&](const TensorResult&, size_t done, size_t total) {
    ++callbacks;
    EXPECT_EQ(done, callbacks);
    EXPECT_EQ(total, 4u);
  });
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_TRUE(r->aborted);
  EXPECT_EQ(r->abort_status.code(), ErrorCode::kBackend);
  EXPECT_NE(r->abort_status.message().find("side B"), std::string::npos);
  EXPECT_NE(r->abort_status.message().find("the runtime gave up"), std::string::npos);
  ASSERT_EQ(r->rows.size(), 1u);
  EXPECT_EQ(r->rows[0].name, "a");
  EXPECT_FALSE(r->rows[0].pass);
  EXPECT_EQ(r->failures, 1u);
  EXPECT_EQ(r->frontier, std::vector<int>{0});
  EXPECT_EQ(callbacks, 1u);
  EXPECT_EQ(b.fetches(), 2u);
}

TEST(RunComparison, MemoryBudgetSplitsTheRunsIntoBatches) {
  const std::vector<std::string> names = {"a", "b", "c", "d", "e"};
  FakeSide a("A"), b("B");
  Fill(&a, &b, names, {});
  CompareJob job = PlainJob();
  job.max_memory = 64;  // each pair holds 2 x 16 bytes: two pairs per run
  auto r = RunComparison(a, b, job);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->rows.size(), 5u);
  EXPECT_EQ(r->batches, 3u);
  EXPECT_EQ(r->runs_a, 3u);
  EXPECT_EQ(r->runs_b, 3u);
  EXPECT_EQ(a.fetch_log(), (std::vector<std::vector<std::string>>{{"a", "b"}, {"c", "d"}, {"e"}}));
  EXPECT_EQ(b.fetch_log(), a.fetch_log());

  FakeSide a2("A"), b2("B");
  Fill(&a2, &b2, names, {});
  auto whole = RunComparison(a2, b2, PlainJob());  // no budget: one run per side
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole->batches, 1u);
  EXPECT_EQ(a2.runs(), 1u);
  EXPECT_EQ(b2.fetched_tensors(), 5u);
}

// Shape inference sized nothing (dynamic axes): the first run fetches one pair, and its real
// size (2 x 16 bytes) plans the rest: two pairs per run under 64 bytes.
TEST(RunComparison, UnknownSizesArePlannedFromTheFirstFetch) {
  const std::vector<std::string> names = {"a", "b", "c", "d", "e"};
  FakeSide a("A"), b("B");
  Fill(&a, &b, names, {});
  for (const auto& n : names) {
    a.SetEstBytes(n, 0);
    b.SetEstBytes(n, 0);
  }
  CompareJob job = PlainJob();
  job.max_memory = 64;
  auto r = RunComparison(a, b, job);
  ASSERT_TRUE(r.ok()) << r.status().message();
  EXPECT_EQ(r->rows.size(), 5u);
  EXPECT_EQ(r->batches, 3u);
  EXPECT_EQ(a.fetch_log(), (std::vector<std::vector<std::string>>{{"a"}, {"b", "c"}, {"d", "e"}}));
  EXPECT_EQ(b.fetch_log(), a.fetch_log());
}

TEST(RunComparison, PairsByExactNameOrTheMapping) {
  FakeSide a("A"), b("B");
  a.Add("a", "A", "Relu", MakeF32({1, 4}, kRef));
  a.Add("b", "B", "Relu", MakeF32({1, 4}, kRef));
  a.Add("gone", "G", "Relu", MakeF32({1, 4}, kRef));
  b.Add("a", "A", "Relu", MakeF32({1, 4}, kRef));
  b.Add("b_renamed", "B", "Relu", MakeF32({1, 4}, {1, 2, 3.5f, 4}));
  b.Add("new", "N", "Relu", MakeF32({1, 4}, kRef));
  CompareJob job = PlainJob();
  job.rename = {{"b", "b_renamed"}};
  auto r = RunComparison(a, b, job);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->rows.size(), 2u);
  EXPECT_EQ(r->rows[1].name, "b");
  EXPECT_EQ(r->rows[1].name_b, "b_renamed");
  EXPECT_FALSE(r->rows[1].pass);
  EXPECT_EQ(r->only_a, std::vector<std::string>{"gone"});
  EXPECT_EQ(r->only_b, std::vector<std::string>{"new"});
}

// A PyTorch module and the containers whose last child it is all pair with one tensor of B:
// the fault is introduced once, by the smallest module (first in A's order); the containers
// only pass it on, and the frontier holds one row per tensor.
TEST(RunComparison, ContainersSharingATensorAreNeverIntroduced) {
  const std::vector<std::string> names = {"a", "b", "c"};
  Model m = ChainModel(names);
  FakeSide a("A"), b("B");
  a.Add("block.conv", "B", "Relu", MakeF32({1, 4}, kRef));
  a.Add("block", "B", "Relu", MakeF32({1, 4}, kRef));
  a.Add("stage", "B", "Relu", MakeF32({1, 4}, kRef));
  a.Add("c", "C", "Relu", MakeF32({1, 4}, kRef));
  b.Add("a", "A", "Relu", MakeF32({1, 4}, kRef));
  b.Add("b", "B", "Relu", MakeF32({1, 4}, {1, 2, 3.5f, 4}));
  b.Add("c", "C", "Relu", MakeF32({1, 4}, {1, 2, 3.5f, 4}));
  b.SetModel(&m);
  CompareJob job = PlainJob();
  job.rename = {{"block.conv", "b"}, {"block", "b"}, {"stage", "b"}};
  auto r = RunComparison(a, b, job);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->rows.size(), 4u);
  EXPECT_EQ(Roles(*r), (std::vector<Role>{Role::kIntroduced, Role::kInherited, Role::kInherited,
                                          Role::kInherited}));
  EXPECT_EQ(r->frontier, std::vector<int>{0});
}

// A Sin of an argument of magnitude 600 may err by 600 * atol in absolute terms (PeriodicBudget);
// a Concat that only copies it carries that budget, a Mul that computes from it does not.
TEST(RunComparison, DataMovementCarriesTheBudgetOfWhatItCopies) {
  auto m = BuildModel(TempPath("sin_concat.onnx"),
                      {{"P", "Mul", {"x", "x"}, {"p"}},
                       {"S", "Sin", {"p"}, {"s"}},
                       {"C", "Concat", {"s", "s"}, {"c"}},
                       {"M", "Mul", {"s", "s"}, {"m"}}},
                      {"x"}, {"c", "m"});
  ASSERT_TRUE(m.ok()) << m.status().message();
  FakeSide a("A"), b("B");
  const std::vector<float> p = {600, 1, 2, 3}, sa = {0.5f, 0.25f, 0.5f, 0.25f},
                           sb = {0.503f, 0.25f, 0.5f, 0.25f};
  a.Add("p", "P", "Mul", MakeF32({1, 4}, p));
  b.Add("p", "P", "Mul", MakeF32({1, 4}, p));
  a.Add("s", "S", "Sin", MakeF32({1, 4}, sa));
  b.Add("s", "S", "Sin", MakeF32({1, 4}, sb));
  a.Add("c", "C", "Concat", MakeF32({1, 4}, sa));
  b.Add("c", "C", "Concat", MakeF32({1, 4}, sb));
  a.Add("m", "M", "Mul", MakeF32({1, 4}, sa));
  b.Add("m", "M", "Mul", MakeF32({1, 4}, sb));
  b.SetModel(&*m);
  CompareJob job;
  job.policy.global = Tolerance{1e-5, 1e-3, true};
  auto r = RunComparison(a, b, job);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->rows.size(), 4u);
  // |d| = 3e-3 at 0.5: allowed 1e-5 + 5e-4 by the base tolerance, 600 * 1e-5 = 6e-3 by the budget
  EXPECT_DOUBLE_EQ(r->rows[1].tolerance.noise_floor, 600 * 1e-5);
  EXPECT_TRUE(r->rows[1].pass);
  EXPECT_DOUBLE_EQ(r->rows[2].tolerance.noise_floor, 600 * 1e-5);
  EXPECT_TRUE(r->rows[2].pass);
  EXPECT_DOUBLE_EQ(r->rows[3].tolerance.noise_floor, 0);
  EXPECT_FALSE(r->rows[3].pass);
}

TEST(RunComparison, RowsComparedTwoAtATimeKeepTheirOrderAndTheirOwnErrors) {
  // twelve rows of 2^16 elements: together enough for a second thread (two at a time); row k
  // of B differs from A at element 1000 * k by (k + 1) * 1e-3 (beyond 1e-3 + 1e-3 * |a| or not)
  std::vector<std::string> names;
  for (int k = 0; k < 12; ++k) names.push_back("t" + std::to_string(k));
  Model m = ChainModel(names);
  FakeSide a("A"), b("B");
  std::vector<float> ref(1 << 16);
  for (size_t i = 0; i < ref.size(); ++i) ref[i] = 0.5f + float(i % 7);
  std::vector<double> injected;
  std::vector<uint64_t> beyond;
  for (int k = 0; k < 12; ++k) {
    std::vector<float> changed = ref;
    size_t at = 1000 * size_t(k);
    changed[at] += float((k + 1) * 1e-3);
    injected.push_back(double(changed[at]) - double(ref[at]));
    beyond.push_back(injected.back() > 1e-3 + 1e-3 * ref[at] ? 1 : 0);
    a.Add(names[k], NodeOf(names[k]), "Relu", MakeF32({1, int64_t(ref.size())}, ref));
    b.Add(names[k], NodeOf(names[k]), "Relu", MakeF32({1, int64_t(ref.size())}, changed));
  }
  b.SetModel(&m);
  std::vector<std::pair<std::string, size_t>> seen;
  auto r = RunComparison(a, b, PlainJob(), [&](const TensorResult& row, size_t done, size_t) {
    seen.emplace_back(row.name, done);
  });
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->rows.size(), names.size());
  ASSERT_EQ(seen.size(), names.size());
  for (size_t k = 0; k < names.size(); ++k) {
    EXPECT_EQ(r->rows[k].name, names[k]);
    EXPECT_EQ(seen[k], std::make_pair(names[k], k + 1));
    EXPECT_EQ(r->rows[k].metrics.max_abs, injected[k]) << names[k];
    EXPECT_EQ(r->rows[k].metrics.mismatches, beyond[k]) << names[k];
  }
  EXPECT_GT(std::count(beyond.begin(), beyond.end(), 1u), 0);
  EXPECT_GT(std::count(beyond.begin(), beyond.end(), 0u), 0);
}

TEST(RunComparison, SidesWithNothingInCommonFail) {
  FakeSide a("A"), b("B");
  a.Add("a", "A", "Relu", MakeF32({1, 4}, kRef));
  b.Add("z", "Z", "Relu", MakeF32({1, 4}, kRef));
  auto r = RunComparison(a, b, PlainJob());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(a.fetches(), 0u);
}

TEST(RunComparison, ACallersStopEndsItBeforeTheNextBatch) {
  const std::vector<std::string> names = {"a", "b", "c", "d"};
  FakeSide a("A"), b("B");
  Fill(&a, &b, names, {});
  CompareJob job = PlainJob();
  job.max_memory = 1;  // one tensor per batch: a fetch of each side per tensor
  size_t checks = 0;
  job.stop = [&checks] { return ++checks > 2; };  // the caller cancels after two batches
  auto r = RunComparison(a, b, job);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "comparison stopped by the caller after 2 of 4 tensors");
  EXPECT_EQ(a.fetches(), 2u);  // the third batch was never fetched
  EXPECT_EQ(b.fetches(), 2u);
  job.stop = [] { return false; };
  EXPECT_TRUE(RunComparison(a, b, job).ok());
}

}  // namespace
}  // namespace onnxprobe
