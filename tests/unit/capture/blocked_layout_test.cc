// BlockedLayoutTensors on an original graph built with ONNX's generated classes and an optimized
// graph written as ONNX Runtime writes its blocked layout: which original tensors the layout's
// nodes compute under the runtime's own names.
#include "capture/blocked_layout.h"

#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "../graph_builder.h"

namespace onnxprobe {
namespace {

using test::AddInitializer;
using test::AddNode;

FileNode Blocked(const std::string& op, const std::string& name, std::vector<std::string> in,
                 const std::string& out, const std::string& activation = "") {
  FileNode n{name, op, "com.microsoft.nchwc", std::move(in), {out}, {}, {}};
  if (!activation.empty()) {
    n.strings["activation"] = activation;
    n.attributes = "activation=" + activation;
  }
  return n;
}

FileNode Standard(const std::string& op, const std::string& name, std::vector<std::string> in,
                  const std::string& out) {
  return {name, op, "", std::move(in), {out}, {}, {}};
}

class BlockedLayoutTest : public ::testing::Test {
 protected:
  void SetUp() override {
    onnx::ModelProto m = test::ModelWithInputX();
    onnx::GraphProto* g = m.mutable_graph();
    for (const char* w : {"w1", "w2", "w3", "w4"}) AddInitializer(g, w);
    AddNode(g, "Conv", {"x", "w1"}, "c1");  // Conv + Relu, fused before the layout
    AddNode(g, "Relu", {"c1"}, "r1");
    AddNode(g, "Conv", {"r1", "w2"}, "c2");  // Conv + Add + Relu, all fused by the layout
    AddNode(g, "Add", {"c2", "r1"}, "s2");
    AddNode(g, "Relu", {"s2"}, "r2");
    AddNode(g, "BatchNormalization", {"r2", "w1", "w2", "w3", "w4"}, "bn");
    AddNode(g, "MaxPool", {"bn"}, "p");
    AddNode(g, "Concat", {"p", "r2"}, "cat");  // a standard op working on blocked tensors
    // read twice: its Relu cannot be told to follow (a graph the runtime never writes: it would not
    // fuse a Relu into a Conv whose output another node reads)
    AddNode(g, "Conv", {"cat", "w3"}, "c3");
    AddNode(g, "Relu", {"c3"}, "r3");
    AddNode(g, "Sigmoid", {"c3"}, "s3");
    AddNode(g, "Add", {"r3", "s3"}, "out");
    g->add_output()->set_name("out");
    std::string error;
    model_ = test::WriteAndLoad(m, "onnxprobe_blocked_layout", &dir_, &error);
    ASSERT_NE(model_, nullptr) << error;
    // what the runtime writes: its own names for blocked tensors, the original tensor's name
    // on the node that replaced it, a reorder back where the standard layout is needed
    optimized_ = {
        Blocked("ReorderInput", "ReorderInput_1", {"x"}, "t0"),
        Blocked("Conv", "r1_nchwc", {"t0", "w1", ""}, "t1", "Relu"),
        Blocked("Conv", "c2_nchwc", {"t1", "w2", "", "t1"}, "t2", "Relu"),
        Blocked("Conv", "bn_bn_nchwc", {"t2", "w1"}, "t3"),
        Blocked("MaxPool", "p_nchwc", {"t3"}, "t4"),
        Standard("Concat", "n_cat", {"t4", "t2"}, "t5"),
        Blocked("Conv", "c3_nchwc", {"t5", "w3"}, "t6", "Relu"),
        Blocked("ReorderOutput", "ReorderOutput", {"t6"}, "r3"),
        Standard("Sigmoid", "n_s3", {"c3"}, "s3"),
        Standard("Add", "n_out", {"r3", "s3"}, "out"),
    };
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::filesystem::path dir_;
  std::unique_ptr<Model> model_;
  std::vector<FileNode> optimized_;
};

TEST_F(BlockedLayoutTest, NamesTheOriginalTensorsTheLayoutComputes) {
  std::set<std::string> present{"r3", "s3", "out"};
  auto found = BlockedLayoutTensors(model_->index(), optimized_, present);
  std::set<std::string> got;
  std::map<std::string, std::string> rule;
  for (const auto& b : found) {
    got.insert(b.name);
    rule[b.name] = b.rule;
  }
  // r1: activation fused before the layout; r2: the Add and the Relu absorbed; bn: a
  // BatchNormalization as a convolution; cat: a standard node on blocked tensors. c3 is read
  // twice, so the Relu cannot have been absorbed into it: nothing is claimed for that node.
  EXPECT_EQ(got, (std::set<std::string>{"r1", "r2", "bn", "p", "cat"}));
  EXPECT_EQ(found.size(), got.size());
  // how each was found, the groups checked apart when marking all of them changes a kernel
  EXPECT_EQ(rule["r1"], "Conv");
  EXPECT_EQ(rule["r2"], "Conv+Add+Relu");
  EXPECT_EQ(rule["cat"], "kept Concat");
}

TEST_F(BlockedLayoutTest, LeavesOutWhatIsPresentAndGraphOutputs) {
  std::set<std::string> got;
  for (const auto& b : BlockedLayoutTensors(model_->index(), optimized_, {"r1", "cat"}))
    got.insert(b.name);
  EXPECT_EQ(got, (std::set<std::string>{"r2", "bn", "p"}));
  // no blocked layout at all: nothing
  std::vector<FileNode> plain{Standard("Conv", "n_c1", {"x", "w1"}, "c1")};
  EXPECT_TRUE(BlockedLayoutTensors(model_->index(), plain, {}).empty());
}

TEST_F(BlockedLayoutTest, ClaimsNoGraphOutputNoUnknownAndNoMismatchedNode) {
  std::vector<FileNode> nodes{
      // a standard node listed before the blocked node it reads (file order is not topological)
      Standard("Concat", "n_cat", {"t4", "t2"}, "t5"),
      Blocked("MaxPool", "p_nchwc", {"t3"}, "t4"),
      Blocked("Conv", "c2_nchwc", {"t1", "w2", "", "t1"}, "t2", "Relu"),
      // a blocked node named after the graph output, one named after no tensor at all
      Blocked("GlobalAveragePool", "out_nchwc", {"t5"}, "t7"),
      Blocked("Conv", "nothing_nchwc", {"t5", "w4"}, "t8"),
      // a node of the original's name but another op: not the original node
      Standard("Relu", "n_s3", {"t8"}, "t9"),
  };
  std::set<std::string> got;
  for (const auto& b : BlockedLayoutTensors(model_->index(), nodes, {})) got.insert(b.name);
  EXPECT_EQ(got, (std::set<std::string>{"cat", "p", "r2"}));
}

TEST_F(BlockedLayoutTest, SameKernelsIgnoresReordersOnly) {
  std::vector<FileNode> with = optimized_;
  with.push_back(Blocked("ReorderOutput", "ReorderOutput_9", {"t2"}, "r2"));
  std::reverse(with.begin(), with.end());  // order does not matter
  EXPECT_TRUE(SameKernels(optimized_, with));
  // a fusion undone: the Add is a node of its own again
  std::vector<FileNode> undone = optimized_;
  undone.push_back(Standard("Add", "n_s2", {"c2", "r1"}, "s2"));
  EXPECT_FALSE(SameKernels(optimized_, undone));
  // the same node with another activation
  std::vector<FileNode> other = optimized_;
  other[1] = Blocked("Conv", "r1_nchwc", {"t0", "w1", ""}, "t1", "Sigmoid");
  EXPECT_FALSE(SameKernels(optimized_, other));
}

}  // namespace
}  // namespace onnxprobe
