// Tensor mappings (renamed tensors): an entry that pairs nothing is an error naming what is
// missing, not silently ignored.
#include <gtest/gtest.h>

#include "../fake_side.h"
#include "onnxprobe/engine/comparison.h"

namespace onnxprobe {
namespace {

using fake::FakeSide;
using fake::MakeF32;

void Fill(FakeSide* a, FakeSide* b) {
  a->Add("conv", "Conv", "Conv", MakeF32({2}, {1, 2}));
  a->Add("relu", "Relu", "Relu", MakeF32({2}, {1, 2}));
  b->Add("conv", "Conv", "Conv", MakeF32({2}, {1, 2}));
  b->Add("relu_renamed", "Relu", "Relu", MakeF32({2}, {1, 2}));
}

TEST(Mapping, PairsRenamedTensors) {
  FakeSide a, b;
  Fill(&a, &b);
  CompareJob job;
  job.rename = {{"relu", "relu_renamed"}};
  auto r = RunComparison(a, b, job);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->rows.size(), 2u);
  EXPECT_EQ(r->rows[1].name, "relu");
  EXPECT_EQ(r->rows[1].name_b, "relu_renamed");
  EXPECT_TRUE(r->only_a.empty());
  EXPECT_TRUE(r->only_b.empty());
}

struct BadEntry {
  std::string from, to, says;
};

class MappingEntry : public ::testing::TestWithParam<BadEntry> {};

TEST_P(MappingEntry, ThatPairsNothingFails) {
  FakeSide a, b;
  Fill(&a, &b);
  CompareJob job;
  job.rename = {{"relu", "relu_renamed"}, {GetParam().from, GetParam().to}};
  auto r = RunComparison(a, b, job);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  const std::string& m = r.status().message();
  EXPECT_NE(m.find("pairs nothing"), std::string::npos) << m;
  EXPECT_NE(m.find(GetParam().says), std::string::npos) << m;
  EXPECT_EQ(m.find("--"), std::string::npos) << "library messages name no flags: " << m;
}

INSTANTIATE_TEST_SUITE_P(
    Entries, MappingEntry,
    ::testing::Values(BadEntry{"relux", "relu_renamed2",
                               "side A has no tensor 'relux' and side B has no tensor "
                               "'relu_renamed2'"},
                      BadEntry{"relux", "conv", "side A has no tensor 'relux'"},
                      BadEntry{"conv", "conv_typo", "side B has no tensor 'conv_typo'"}));

}  // namespace
}  // namespace onnxprobe
