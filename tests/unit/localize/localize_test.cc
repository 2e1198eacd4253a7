// Localization: ApplyRoles on hand-built results, and Localize with a live side B (the demo CNN
// whose second convolution's weights were changed) against a fake side A holding the clean
// model's tensors, so the node that introduces the error is known by construction.
#include "onnxprobe/localize/localize.h"

#include <gtest/gtest.h>

#include "../fake_side.h"
#include "onnxprobe/capture/capture.h"

namespace onnxprobe {
namespace {

using fake::FakeSide;
using fake::MakeF32;

const std::string kDemo = std::string(ONNXPROBE_TEST_DATA) + "/demo/demo_cnn.onnx";
const std::string kFaulty = std::string(ONNXPROBE_TEST_DATA) + "/demo/demo_cnn_faulty.onnx";
const std::string kFaultyTensor = "/features/features.3/Conv_output_0";

TensorResult Row(const std::string& name, bool pass, Role role) {
  TensorResult t;
  t.name = t.name_b = name;
  t.pass = t.within_tolerance = pass;
  t.role = role;
  return t;
}

TEST(ApplyRoles, SettledRolesReplaceTheGraphsAndTheFrontierFollows) {
  ComparisonResult r;
  r.rows = {Row("a", true, Role::kPass), Row("b", false, Role::kIntroduced),
            Row("c", false, Role::kIntroduced), Row("d", false, Role::kInherited)};
  r.frontier = {1, 2};
  r.failures = 3;
  LocalizeResult l;
  // c is within tolerance when run alone: it only inherits; d fails alone: it introduces
  l.settled = {{2, Role::kInherited}, {3, Role::kIntroduced}, {99, Role::kIntroduced}};
  ApplyRoles(l, &r);
  EXPECT_EQ(r.rows[1].role, Role::kIntroduced);
  EXPECT_EQ(r.rows[2].role, Role::kInherited);
  EXPECT_EQ(r.rows[3].role, Role::kIntroduced);
  EXPECT_EQ(r.frontier, (std::vector<int>{1, 3}));
  EXPECT_EQ(r.rows.size(), 4u);  // an index out of range changes nothing

  LocalizeResult none;
  ApplyRoles(none, &r);  // nothing settled: roles stay, the frontier is still consistent
  EXPECT_EQ(r.frontier, (std::vector<int>{1, 3}));
}

class LocalizeDemo : public ::testing::Test {
 protected:
  void SetUp() override {
    auto clean = Model::Load(kDemo);
    auto faulty = Model::Load(kFaulty);
    ASSERT_TRUE(clean.ok()) << clean.status().message();
    ASSERT_TRUE(faulty.ok()) << faulty.status().message();
    InputOptions io;
    io.dim_params = {{"batch", 1}};
    io.seed = 3;
    auto in = PrepareInputs(*clean, io);
    ASSERT_TRUE(in.ok()) << in.status().message();
    inputs_ = std::move(*in);

    // side A: the clean model's tensors, held in memory
    auto live_a = OpenLiveSide(*clean, SideSpec{kDemo});
    ASSERT_TRUE(live_a.ok()) << live_a.status().message();
    ASSERT_TRUE((*live_a)->SetInputs(inputs_).ok());
    std::vector<std::string> names;
    for (const auto& t : (*live_a)->tensors()) names.push_back(t.name);
    auto values = (*live_a)->Fetch(names);
    ASSERT_TRUE(values.ok()) << values.status().message();
    a_ = std::make_unique<FakeSide>("clean tensors");
    for (size_t i = 0; i < names.size(); ++i) {
      const SideTensor& t = (*live_a)->tensors()[i];
      a_->Add(t.name, t.node, t.op_type, (*values)[i].tensor, t.is_graph_output);
    }

    auto live_b = OpenLiveSide(*faulty, SideSpec{kFaulty});
    ASSERT_TRUE(live_b.ok()) << live_b.status().message();
    b_ = std::move(*live_b);
    ASSERT_TRUE(b_->SetInputs(inputs_).ok());

    auto r = RunComparison(*a_, *b_, job_);
    ASSERT_TRUE(r.ok()) << r.status().message();
    r_ = std::move(*r);
    ASSERT_GE(r_.first_failure, 0);
    ASSERT_EQ(r_.rows[r_.first_failure].name, kFaultyTensor);
  }

  int RowOf(const std::string& name) const {
    for (size_t i = 0; i < r_.rows.size(); ++i) {
      if (r_.rows[i].name == name) return static_cast<int>(i);
    }
    return -1;
  }

  std::vector<NamedTensor> inputs_;
  std::unique_ptr<FakeSide> a_;
  std::unique_ptr<Side> b_;
  CompareJob job_;
  ComparisonResult r_;
};

TEST_F(LocalizeDemo, TheChangedNodeIsIntroducedAndItsConsumersInherit) {
  // the comparison alone already marks it from the graph
  int faulty = RowOf(kFaultyTensor);
  EXPECT_EQ(r_.frontier, std::vector<int>{faulty});
  EXPECT_EQ(r_.rows[RowOf("/features/features.0/Conv_output_0")].role, Role::kPass);

  LocalizeOptions o;
  o.candidates = Candidates::kFailing;  // isolate every failing row
  o.drift = false;                      // one isolation run per failing row, nothing else
  auto l = Localize(*a_, *b_, inputs_, job_, o, r_);
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_TRUE(l->ran);
  ASSERT_EQ(l->culprits.size(), r_.failures);
  const Culprit& top = l->culprits[0];
  EXPECT_EQ(top.tensor, kFaultyTensor);
  EXPECT_EQ(top.node, "/features/features.3/Conv");
  EXPECT_EQ(top.op_type, "Conv");
  EXPECT_EQ(top.row, faulty);
  EXPECT_TRUE(top.isolated);
  EXPECT_TRUE(top.introduced);
  EXPECT_GT(top.metrics.max_abs, 0);
  for (size_t i = 1; i < l->culprits.size(); ++i) {
    EXPECT_TRUE(l->culprits[i].isolated) << l->culprits[i].tensor << ": " << l->culprits[i].error;
    EXPECT_FALSE(l->culprits[i].introduced) << l->culprits[i].tensor;
  }
  // each isolated failing row's role is settled: the faulty one introduced, the rest inherited
  ASSERT_EQ(l->settled.size(), r_.failures);
  for (const auto& [row, role] : l->settled) {
    EXPECT_EQ(role, row == faulty ? Role::kIntroduced : Role::kInherited) << r_.rows[row].name;
  }
  EXPECT_EQ(l->isolation_runs, r_.failures);
  EXPECT_TRUE(l->note.empty()) << l->note;
}

// Rows wrongly marked as introduced (as without a graph, or by an earlier stage) are isolated;
// the ones within tolerance when run alone become inherited and leave the frontier.
TEST_F(LocalizeDemo, ARowWithinToleranceAloneBecomesInherited) {
  ComparisonResult r = r_;
  for (auto& row : r.rows) {
    if (!row.pass) row.role = Role::kIntroduced;
  }
  r.frontier.clear();
  for (size_t i = 0; i < r.rows.size(); ++i) {
    if (!r.rows[i].pass) r.frontier.push_back(static_cast<int>(i));
  }
  ASSERT_GT(r.frontier.size(), 1u);
  auto l = Localize(*a_, *b_, inputs_, job_, LocalizeOptions(), r);
  ASSERT_TRUE(l.ok()) << l.status().message();
  EXPECT_EQ(l->culprits.size(), r.frontier.size());
  ApplyRoles(*l, &r);
  int faulty = RowOf(kFaultyTensor);
  EXPECT_EQ(r.frontier, std::vector<int>{faulty});
  for (size_t i = 0; i < r.rows.size(); ++i) {
    if (!r.rows[i].pass && static_cast<int>(i) != faulty)
      EXPECT_EQ(r.rows[i].role, Role::kInherited) << r.rows[i].name;
  }
}

TEST_F(LocalizeDemo, ASideBWithoutAModelCannotIsolate) {
  auto l = Localize(*b_, *a_, inputs_, job_, LocalizeOptions(), r_);
  ASSERT_TRUE(l.ok());
  EXPECT_TRUE(l->ran);
  EXPECT_TRUE(l->culprits.empty());
  EXPECT_TRUE(l->settled.empty());
  EXPECT_NE(l->note.find("side B is a dump"), std::string::npos) << l->note;
}

TEST_F(LocalizeDemo, NothingToIsolateOnAPass) {
  ComparisonResult pass = r_;
  for (auto& row : pass.rows) {
    row.pass = true;
    row.role = Role::kPass;
  }
  pass.failures = 0;
  pass.first_failure = -1;
  pass.first_difference = -1;  // bit-exact: no drift to trace either
  pass.frontier.clear();
  size_t fetches = a_->fetches();
  auto l = Localize(*a_, *b_, inputs_, job_, LocalizeOptions(), pass);
  ASSERT_TRUE(l.ok());
  EXPECT_TRUE(l->culprits.empty());
  EXPECT_TRUE(l->drift_origins.empty());
  EXPECT_EQ(l->isolation_runs, 0u);
  EXPECT_EQ(a_->fetches(), fetches);  // side A not asked for anything
}

// Where differences are born: the changed convolution reads bit-exact inputs, so it is a drift
// origin without a run; every node after it, run alone on B with A's inputs, is bit-exact.
TEST_F(LocalizeDemo, TheChangedNodeIsTheOnlyDriftOrigin) {
  ASSERT_EQ(r_.first_difference, RowOf(kFaultyTensor));
  LocalizeOptions o;
  o.drift = true;
  auto l = Localize(*a_, *b_, inputs_, job_, o, r_);
  ASSERT_TRUE(l.ok()) << l.status().message();
  ASSERT_EQ(l->drift_origins.size(), 1u);
  EXPECT_EQ(l->drift_origins[0].tensor, kFaultyTensor);
  EXPECT_TRUE(l->drift_origins[0].introduced);
  EXPECT_EQ(l->drift_unexamined, 0u);
}

}  // namespace
}  // namespace onnxprobe
