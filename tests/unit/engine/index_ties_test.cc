#include "onnxprobe/engine/index_ties.h"

#include <gtest/gtest.h>

#include <cstring>

#include "../fake_side.h"

namespace onnxprobe {
namespace {

using fake::BuildModel;
using fake::MakeF32;

Tensor Indices(const Shape& shape, const std::vector<int64_t>& v) {
  Tensor t = *Tensor::Allocate(DType::kInt64, shape);
  std::memcpy(t.data(), v.data(), v.size() * sizeof(int64_t));
  return t;
}

Model OneNode(const std::string& op, const std::vector<std::string>& in,
              const std::vector<std::string>& out) {
  auto m = BuildModel(::testing::TempDir() + "/index_ties_" + op + ".onnx", {{"n", op, in, out}},
                      in, out);
  EXPECT_TRUE(m.ok()) << m.status().message();
  return std::move(*m);
}

const Tolerance kTol{1e-5, 1e-3, false};

TEST(IndexTies, TopKIndicesThatPickEqualValuesAreTies) {
  Model m = OneNode("TopK", {"x", "k"}, {"v", "i"});
  const NodeInfo& n = m.index().nodes()[0];
  ASSERT_TRUE(IsIndexOutput(n, "i"));
  EXPECT_FALSE(IsIndexOutput(n, "v"));
  // axis -1 (the default); row 1 holds a tie: 2 at positions 0 and 1
  Tensor x = MakeF32({2, 4}, {1, 0, 0, 3, 2, 2, 1, 0});
  Tensor expected = Indices({2, 2}, {3, 0, 0, 1});
  uint64_t differing = 0;
  EXPECT_TRUE(OnlyIndexTies(m, n, expected, Indices({2, 2}, {3, 0, 1, 0}), x, kTol, &differing));
  EXPECT_EQ(differing, 2u);
  // row 0's second pick: 1 against 0 is no tie
  EXPECT_FALSE(OnlyIndexTies(m, n, expected, Indices({2, 2}, {3, 1, 0, 1}), x, kTol, &differing));
  // nothing differs: not a tie settlement
  EXPECT_FALSE(OnlyIndexTies(m, n, expected, expected, x, kTol, &differing));
  // out of range
  EXPECT_FALSE(OnlyIndexTies(m, n, expected, Indices({2, 2}, {3, 0, 9, 1}), x, kTol, &differing));
}

TEST(IndexTies, ArgMaxAlongAxisZeroWithinTolerance) {
  Model m = OneNode("ArgMax", {"x"}, {"i"});
  const NodeInfo& n = m.index().nodes()[0];
  ASSERT_TRUE(IsIndexOutput(n, "i"));
  // axis 0, keepdims 1 (the defaults): column 0 ties at rows 0 and 1 within float noise,
  // column 1 at rows 0 and 2
  Tensor x = MakeF32({3, 2}, {1.0f, 5, 1.0000001f, 2, 0, 5});
  Tensor expected = Indices({1, 2}, {0, 0});
  uint64_t differing = 0;
  double ratio = -1;
  EXPECT_TRUE(OnlyIndexTies(m, n, expected, Indices({1, 2}, {1, 2}), x, kTol, &differing, &ratio));
  EXPECT_EQ(differing, 2u);
  // the larger share of the tolerance the tied values use: 1.0000001f - 1 over 1e-5 + 1e-3
  double allowed = 1e-5 + 1e-3 * double(1.0000001f);
  EXPECT_NEAR(ratio, (double(1.0000001f) - 1.0) / allowed, 1e-9);
  EXPECT_FALSE(OnlyIndexTies(m, n, expected, Indices({1, 2}, {2, 0}), x, kTol, &differing));
}

}  // namespace
}  // namespace onnxprobe
