// ExtractSubgraph against a model encoded by hand in the protobuf wire format: the weights a
// node reads must come out as the exact bytes written, including an initializer in a second
// occurrence of the graph field and a name given twice (protobuf keeps the later one).
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <filesystem>
#include <fstream>
#include <iterator>

#include "../proto_wire.h"
#include "onnxprobe/graph/graph.h"
#include "onnxprobe/model/model.h"

namespace onnxprobe {
namespace {

using wire::Bytes;
using wire::Int;
using wire::Len;
using wire::Varint;
// TensorProto: dims 1, data_type 2 (float), name 8, raw_data 9; field 99 is unknown to ONNX.
std::string RawTensor(const std::string& name, const std::string& raw) {
  return Int(1, raw.size() / 4) + Int(2, 1) + Len(8, name) + Int(99, 7) + Len(9, raw);
}
std::string Node(const std::string& a, const std::string& b, const std::string& out) {
  return Len(1, Len(1, a) + Len(1, b) + Len(2, out) + Len(3, "n_" + out) + Len(4, "Add"));
}
std::string Value(const std::string& name) {  // float[4]
  return Len(1, name) + Len(2, Len(1, Int(1, 1) + Len(2, Len(1, Int(1, 4)))));
}

class ExtractSubgraphTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("onnxprobe_extract_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    std::string graph1 = Node("x", "w_big", "y") + Node("y", "w_small", "z") + Len(2, "g") +
                         Len(5, RawTensor("w_big", big_)) +
                         Len(5, RawTensor("w_small", Bytes(16, 2))) + Len(11, Value("x"));
    std::string graph2 = Node("z", "w_late", "out") + Len(5, RawTensor("w_late", late_)) +
                         Len(5, RawTensor("w_small", small_)) + Len(12, Value("out"));
    std::string model =
        Int(1, 8) + Len(8, Int(2, 13)) + Len(7, graph1) + Int(98, 1) + Len(7, graph2);
    path_ = (dir_ / "m.onnx").string();
    std::ofstream(path_, std::ios::binary) << model;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // The serialized subgraph cut around the node producing `out` from input `in`.
  std::string CutBytes(const std::string& in, const std::string& out,
                       SubgraphWeights weights = SubgraphWeights::kEmbedded) {
    auto m = Model::Load(path_);
    EXPECT_TRUE(m.ok()) << m.status().message();
    if (!m.ok()) return {};
    const TensorEntry* t = m->index().Find(out);
    EXPECT_NE(t, nullptr);
    if (t == nullptr) return {};
    SubgraphSpec spec;
    spec.nodes = {t->producer};
    spec.inputs = {in};
    spec.input_types = {{DType::kFloat32, {4}}};
    spec.outputs = {out};
    spec.weights = weights;
    auto bytes = ExtractSubgraph(*m, spec);
    EXPECT_TRUE(bytes.ok()) << bytes.status().message();
    return bytes.ok() ? *bytes : std::string();
  }

  // Its initializers' raw bytes, by name.
  static std::map<std::string, std::string> Initializers(const std::string& bytes) {
    onnx::ModelProto p;
    EXPECT_TRUE(p.ParseFromString(bytes));
    EXPECT_EQ(p.graph().node_size(), 1);
    EXPECT_EQ(p.opset_import(0).version(), 13);
    std::map<std::string, std::string> inits;
    for (const auto& i : p.graph().initializer()) inits[i.name()] = i.raw_data();
    return inits;
  }

  std::map<std::string, std::string> Cut(const std::string& in, const std::string& out) {
    return Initializers(CutBytes(in, out));
  }

  std::filesystem::path dir_;
  std::string path_;
  std::string big_ = Bytes(10000, 1), small_ = Bytes(16, 3), late_ = Bytes(6000, 4);
};

TEST_F(ExtractSubgraphTest, EmbedsTheExactBytesOfTheWeightsTheNodeReads) {
  auto inits = Cut("x", "y");
  ASSERT_EQ(inits.size(), 1u);
  EXPECT_EQ(inits["w_big"], big_);  // over the size the indexed graph keeps
}

TEST_F(ExtractSubgraphTest, ReadsTheSecondGraphOccurrenceAndKeepsTheLaterOfTwoNames) {
  auto late = Cut("z", "out");
  ASSERT_EQ(late.size(), 1u);
  EXPECT_EQ(late["w_late"], late_);
  auto small = Cut("y", "z");
  ASSERT_EQ(small.size(), 1u);
  EXPECT_EQ(small["w_small"], small_);
}

TEST_F(ExtractSubgraphTest, ReferencesLargeWeightsInTheFileAndEmbedsThemOnRequest) {
  std::string referenced = CutBytes("x", "y", SubgraphWeights::kReferenced);
  onnx::ModelProto p;
  ASSERT_TRUE(p.ParseFromString(referenced));
  ASSERT_EQ(p.graph().initializer_size(), 1);
  const onnx::TensorProto& w = p.graph().initializer(0);
  ASSERT_EQ(w.data_location(), onnx::TensorProto::EXTERNAL);
  EXPECT_TRUE(w.raw_data().empty());
  std::map<std::string, std::string> ref;
  for (const auto& kv : w.external_data()) ref[kv.key()] = kv.value();
  EXPECT_EQ(ref["location"], "m.onnx");
  // the reference points at the weight's own bytes in the file written above
  std::ifstream in(path_, std::ios::binary);
  std::string file((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ASSERT_EQ(std::stoull(ref["length"]), big_.size());
  EXPECT_EQ(file.substr(std::stoull(ref["offset"]), big_.size()), big_);

  auto standalone = EmbedExternalData(referenced, dir_.string());
  ASSERT_TRUE(standalone.ok()) << standalone.status().message();
  auto inits = Initializers(*standalone);
  EXPECT_EQ(inits["w_big"], big_);

  auto elsewhere = EmbedExternalData(referenced, (dir_ / "nowhere").string());
  ASSERT_FALSE(elsewhere.ok());
  EXPECT_NE(elsewhere.status().message().find("'w_big'"), std::string::npos)
      << elsewhere.status().message();
  EXPECT_EQ(EmbedExternalData("not a model", dir_.string()).status().code(), ErrorCode::kCorrupt);
}

TEST_F(ExtractSubgraphTest, NamesAnInputThatIsNeitherGivenNorAWeight) {
  auto m = Model::Load(path_);
  ASSERT_TRUE(m.ok());
  SubgraphSpec spec;
  spec.nodes = {m->index().Find("z")->producer};
  spec.inputs = {"x"};
  spec.input_types = {{DType::kFloat32, {4}}};
  spec.outputs = {"z"};
  auto bytes = ExtractSubgraph(*m, spec);
  ASSERT_FALSE(bytes.ok());
  EXPECT_NE(bytes.status().message().find("reads 'y'"), std::string::npos)
      << bytes.status().message();
}

}  // namespace
}  // namespace onnxprobe
