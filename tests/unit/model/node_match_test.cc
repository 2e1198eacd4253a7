// Structural matching of two graphs (model/node_match.h), on hand-built graphs.
#include "model/node_match.h"

#include <gtest/gtest.h>

namespace onnxprobe {
namespace {

using Node = MatchGraph::Node;

Node N(std::string name, std::string op, std::vector<std::string> in, std::vector<std::string> out,
       std::string attrs = "") {
  return Node{std::move(name), std::move(op), std::move(attrs), std::move(in), std::move(out)};
}

// x -> Conv(w) -> Relu -> Sigmoid -> y
MatchGraph Chain(const std::string& prefix, const std::string& w = "w",
                 const std::string& w_hash = "h1") {
  MatchGraph g;
  g.graph_inputs = {"x"};
  g.initializers = {{w, w_hash}};
  g.nodes = {N(prefix + "conv", "Conv", {"x", w}, {prefix + "c"}, "pads=[1]"),
             N(prefix + "relu", "Relu", {prefix + "c"}, {prefix + "r"}),
             N(prefix + "sig", "Sigmoid", {prefix + "r"}, {"y"})};
  return g;
}

TEST(NodeMatch, SameNamesMatchByName) {
  MatchGraph a = Chain(""), b = Chain("");
  GraphMatcher m(a, b);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(m.AForB(i), i);
    EXPECT_EQ(m.HowB(i), MatchHow::kName);
  }
}

TEST(NodeMatch, RenamedChainAndInitializerMatchByStructure) {
  MatchGraph a = Chain("a/"), b = Chain("b/", "weight", "h1");  // same bytes, new name
  GraphMatcher m(a, b);
  EXPECT_EQ(m.InitializerAForB("weight"), "w");
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(m.AForB(i), i) << i;
    EXPECT_EQ(m.HowB(i), MatchHow::kStructure) << i;
  }
  // the renamed tensors resolve to the same sources
  EXPECT_EQ(m.SourceB("b/c"), m.SourceA("a/c"));
  EXPECT_EQ(m.SourceB("weight"), m.SourceA("w"));
}

TEST(NodeMatch, ChangedWeightUnderANewNameStillPairsTheConvLoosely) {
  MatchGraph a = Chain("a/"), b = Chain("b/", "weight", "h2");  // other bytes, other name
  GraphMatcher m(a, b);
  EXPECT_EQ(m.InitializerAForB("weight"), "");
  EXPECT_EQ(m.AForB(0), 0);
  EXPECT_EQ(m.HowB(0), MatchHow::kLoose);  // same op, attributes, and graph input x agrees
  EXPECT_EQ(m.HowB(1), MatchHow::kStructure);
  EXPECT_EQ(m.HowB(2), MatchHow::kStructure);
}

TEST(NodeMatch, InsertedNodeIsUnmatchedAndItsConsumerPairs) {
  MatchGraph a = Chain(""), b = Chain("");
  for (auto* g : {&a, &b}) {
    for (auto& n : g->nodes) n.name.clear();  // structure only
  }
  // b: Conv -> Neg -> Relu -> Sigmoid
  b.nodes.insert(b.nodes.begin() + 1, N("", "Neg", {"c"}, {"neg"}));
  b.nodes[2].inputs = {"neg"};
  GraphMatcher m(a, b);
  EXPECT_EQ(m.AForB(0), 0);
  EXPECT_EQ(m.AForB(1), -1);  // Neg: added
  EXPECT_EQ(m.AForB(2), 1);   // Relu: the only unmatched Relu on both sides
  EXPECT_EQ(m.HowB(2), MatchHow::kLoose);
  EXPECT_EQ(m.AForB(3), 2);  // Sigmoid: exact again once Relu is paired
  EXPECT_EQ(m.HowB(3), MatchHow::kStructure);
  EXPECT_NE(m.SourceB("neg"), m.SourceA("c"));
  EXPECT_EQ(m.SourceB("neg")[0], '?');
}

TEST(NodeMatch, TwinBranchesPairInOrder) {
  MatchGraph a, b;
  a.graph_inputs = b.graph_inputs = {"x"};
  a.nodes = {N("", "Relu", {"x"}, {"r1"}), N("", "Relu", {"x"}, {"r2"}),
             N("", "Add", {"r1", "r2"}, {"y"})};
  b.nodes = {N("", "Relu", {"x"}, {"s1"}), N("", "Relu", {"x"}, {"s2"}),
             N("", "Add", {"s1", "s2"}, {"y"})};
  GraphMatcher m(a, b);
  EXPECT_EQ(m.AForB(0), 0);
  EXPECT_EQ(m.AForB(1), 1);
  EXPECT_EQ(m.AForB(2), 2);
  EXPECT_EQ(m.HowB(2), MatchHow::kStructure);
}

TEST(NodeMatch, RenamedGraphInputMapsByPosition) {
  MatchGraph a = Chain(""), b = Chain("");
  b.graph_inputs = {"pixels"};
  b.nodes[0].inputs[0] = "pixels";
  b.nodes[0].name = "other";  // name match impossible: the key must resolve "pixels" to x
  GraphMatcher m(a, b);
  EXPECT_EQ(m.InputAForB("pixels"), "x");
  EXPECT_EQ(m.AForB(0), 0);
  EXPECT_EQ(m.HowB(0), MatchHow::kStructure);
}

TEST(NodeMatch, UnrelatedNodesStayUnmatched) {
  MatchGraph a = Chain("a/"), b;
  b.graph_inputs = {"x"};
  b.nodes = {N("n", "Tanh", {"x"}, {"y"})};
  GraphMatcher m(a, b);
  EXPECT_EQ(m.AForB(0), -1);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(m.BForA(i), -1);
}

TEST(NodeMatch, DuplicatedNamesAreNotUsedForMatching) {
  MatchGraph a = Chain(""), b = Chain("");
  a.nodes[1].name = a.nodes[2].name = "dup";
  b.nodes[1].name = b.nodes[2].name = "dup";
  GraphMatcher m(a, b);
  EXPECT_EQ(m.HowB(0), MatchHow::kName);
  EXPECT_EQ(m.HowB(1), MatchHow::kStructure);
  EXPECT_EQ(m.AForB(2), 2);
}

}  // namespace
}  // namespace onnxprobe
