// The streaming scan and the kGraphOnly load against models encoded by hand in the protobuf wire
// format: the expected digests are of the exact bytes written, and the kFull load (protobuf's own
// parser) is the reference for everything the scan rebuilds.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <cstring>
#include <fstream>
#include <future>

#include "../proto_wire.h"
#include "model/model_scan.h"
#include "onnxprobe/graph/graph.h"
#include "onnxprobe/model/model.h"

namespace onnxprobe {
namespace {

using wire::Bytes;
using wire::Int;
using wire::Len;
using wire::Varint;

// TensorProto: dims 1, data_type 2, float_data 4 (packed), name 8, raw_data 9, external_data 13,
// data_location 14.
std::string RawTensor(const std::string& name, const std::string& raw, std::string extra = "") {
  return Int(1, raw.size() / 4) + Int(2, 1) + Len(8, name) + extra + Len(9, raw);
}
std::string Node(const std::string& a, const std::string& b, const std::string& out) {
  return Len(1, a) + Len(1, b) + Len(2, out) + Len(3, "n_" + out) + Len(4, "Add");
}
std::string Value(const std::string& name) {  // float[4]
  return Len(1, name) + Len(2, Len(1, Int(1, 1) + Len(2, Len(1, Int(1, 4)))));
}

struct TestModel {
  std::string bytes;
  std::vector<std::pair<std::string, std::string>> expected;  // initializer, its data bytes
};

// Initializers stored every way: large and small raw_data, typed float_data, external data at an
// offset, one larger than a read chunk, and one in a second graph occurrence (protobuf merges
// both); unknown fields at every level.
TestModel MakeModel(const std::string& dir) {
  TestModel m;
  std::string big = Bytes(10000, 1), small = Bytes(16, 2), huge = Bytes((5 << 20) + 3, 3),
              late = Bytes(6000, 4), ext = Bytes(8192, 5);
  float typed[3] = {1.5f, -2.0f, 0.25f};
  std::string typed_bytes(reinterpret_cast<const char*>(typed), sizeof typed);
  std::ofstream(dir + "/w.bin", std::ios::binary) << Bytes(8, 9) << ext << Bytes(5, 9);

  std::string g = Len(1, Node("X", "big", "t0")) + Len(1, Node("t0", "small", "t1")) +
                  Len(1, Node("t1", "typed", "t2")) + Len(1, Node("t2", "ext", "t3")) +
                  Len(1, Node("t3", "huge", "Y")) + Len(2, "g") + Varint(40 << 3 | 5) + "abcd";
  g += Len(5, RawTensor("big", big, Int(30, 7)));
  g += Len(5, RawTensor("small", small));
  g += Len(5, Int(1, 3) + Int(2, 1) + Len(4, typed_bytes) + Len(8, "typed"));
  g += Len(5, Int(1, 2048) + Int(2, 1) + Len(8, "ext") +
                  Len(13, Len(1, "location") + Len(2, "w.bin")) +
                  Len(13, Len(1, "offset") + Len(2, "8")) +
                  Len(13, Len(1, "length") + Len(2, "8192")) + Int(14, 1));
  g += Len(5, RawTensor("huge", huge));
  g += Len(11, Value("X")) + Len(12, Value("Y"));
  std::string tail =
      Len(1, Node("Y", "late", "Z")) + Len(5, RawTensor("late", late)) + Len(12, Value("Z"));
  m.bytes = Int(1, 8) + Len(2, "hand") + Len(8, Len(1, "") + Int(2, 13)) + Len(99, "future") +
            Len(7, g) + Len(7, tail);
  m.expected = {{"big", big}, {"small", small}, {"typed", typed_bytes},
                {"ext", ext}, {"huge", huge},   {"late", late}};
  return m;
}

class PieceStream : public ChunkStream {
 public:
  PieceStream(const std::string& s, size_t piece) : s_(s), piece_(piece) {}
  bool Next(const uint8_t** data, size_t* size) override {
    if (pos_ >= s_.size()) return false;
    *data = reinterpret_cast<const uint8_t*>(s_.data()) + pos_;
    *size = std::min(piece_, s_.size() - pos_);
    pos_ += *size;
    return true;
  }

 private:
  const std::string& s_;
  size_t piece_, pos_ = 0;
};

std::string WriteModel(const std::string& name, const std::string& bytes) {
  std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

TEST(ModelScan, SetsAsideLargeRawDataWhereverChunksSplit) {
  TestModel m = MakeModel(::testing::TempDir());
  for (size_t piece : {size_t(1), size_t(3), size_t(64), size_t(4097), m.bytes.size()}) {
    PieceStream s(m.bytes, piece);
    ModelScan scan;
    ASSERT_TRUE(ScanModel(s, m.bytes.size(), ScanKeep::kFields, &scan)) << piece;
    ASSERT_EQ(scan.initializers.size(), m.expected.size());
    EXPECT_TRUE(scan.has_graph);
    for (size_t i = 0; i < m.expected.size(); ++i) {
      const std::string& data = m.expected[i].second;
      bool aside = m.expected[i].first == "big" || m.expected[i].first == "huge" ||
                   m.expected[i].first == "late";
      EXPECT_EQ(scan.initializers[i].raw_set_aside, aside) << m.expected[i].first;
      if (aside) EXPECT_EQ(scan.initializers[i].raw_sha256, Sha256Hex(data.data(), data.size()));
      // kept fields never carry a set-aside payload
      EXPECT_LT(scan.initializers[i].fields.size(), 200u) << m.expected[i].first;
    }
  }
}

TEST(ModelScan, AssembledModelEqualsProtobufsParseWithoutTheSetAsideWeights) {
  TestModel m = MakeModel(::testing::TempDir());
  onnx::ModelProto expected;
  ASSERT_TRUE(expected.ParseFromString(m.bytes));
  PieceStream s(m.bytes, 4096);
  ModelScan scan;
  ASSERT_TRUE(ScanModel(s, m.bytes.size(), ScanKeep::kFields, &scan));
  onnx::ModelProto got;
  ASSERT_TRUE(AssembleModel(scan, &got));
  ASSERT_EQ(got.graph().initializer_size(), expected.graph().initializer_size());
  for (int i = 0; i < got.graph().initializer_size(); ++i) {
    auto* e = expected.mutable_graph()->mutable_initializer(i);
    if (scan.initializers[size_t(i)].raw_set_aside) {
      EXPECT_EQ(got.graph().initializer(i).raw_data(), std::string(1, '\0'));  // placeholder
      got.mutable_graph()->mutable_initializer(i)->clear_raw_data();
      e->clear_raw_data();
    }
  }
  EXPECT_EQ(got.SerializeAsString(), expected.SerializeAsString());
  EXPECT_EQ(got.graph().node_size(), 6);
}

TEST(ModelScan, RefusesShapesItDoesNotFollow) {
  TestModel m = MakeModel(::testing::TempDir());
  auto scan_ok = [](const std::string& bytes) {
    PieceStream s(bytes, 1000);
    ModelScan scan;
    return ScanModel(s, bytes.size(), ScanKeep::kFields, &scan);
  };
  EXPECT_TRUE(scan_ok(m.bytes));
  EXPECT_FALSE(scan_ok(m.bytes.substr(0, m.bytes.size() - 1)));  // truncated
  EXPECT_FALSE(scan_ok(m.bytes + Varint(3 << 3 | 3)));           // a group
  std::string twice = Len(7, Len(5, RawTensor("w", Bytes(8000, 1)) + Len(9, "abcd")));
  EXPECT_FALSE(scan_ok(Int(1, 8) + twice));  // raw_data twice: protobuf keeps the last
}

void ExpectSameModel(const Model& a, const Model& b) {
  const ModelSummary &sa = a.summary(), &sb = b.summary();
  ASSERT_EQ(sa.initializers.size(), sb.initializers.size());
  for (size_t i = 0; i < sa.initializers.size(); ++i) {
    EXPECT_EQ(sa.initializers[i].name, sb.initializers[i].name);
    EXPECT_EQ(sa.initializers[i].dims, sb.initializers[i].dims);
    EXPECT_EQ(sa.initializers[i].external, sb.initializers[i].external);
  }
  EXPECT_EQ(sa.ir_version, sb.ir_version);
  EXPECT_EQ(sa.producer_name, sb.producer_name);
  EXPECT_EQ(sa.op_counts, sb.op_counts);
  EXPECT_EQ(sa.param_bytes, sb.param_bytes);
  ASSERT_EQ(a.index().nodes().size(), b.index().nodes().size());
  for (size_t i = 0; i < a.index().nodes().size(); ++i)
    EXPECT_EQ(a.index().nodes()[i].name, b.index().nodes()[i].name);
  EXPECT_EQ(a.checker_warnings(), b.checker_warnings());
}

TEST(ModelIdentity, GraphOnlyLoadMatchesFullLoadAndTheBytesWritten) {
  TestModel m = MakeModel(::testing::TempDir());
  std::string path = WriteModel("hand.onnx", m.bytes);
  auto full = Model::Load(path);
  auto graph = Model::Load(path, LoadMode::kGraphOnly);
  ASSERT_TRUE(full.ok()) << full.status().message();
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  EXPECT_EQ(graph->load_mode(), LoadMode::kGraphOnly);
  ExpectSameModel(*full, *graph);
  ASSERT_EQ(full->summary().initializers.size(), m.expected.size());

  Md5 md5;
  md5.Update(m.bytes.data(), m.bytes.size());
  std::string md5_hex = md5.HexDigest(), sha_hex = Sha256Hex(m.bytes.data(), m.bytes.size());
  for (const Model* model : {&*full, &*graph}) {
    auto id = model->Identity();
    ASSERT_TRUE(id.ok()) << id.status().message();
    EXPECT_EQ(id->file.size, m.bytes.size());
    EXPECT_EQ(id->file.md5, md5_hex);
    EXPECT_EQ(id->file.sha256, sha_hex);
    ASSERT_EQ(id->initializers.size(), m.expected.size());
    for (size_t i = 0; i < m.expected.size(); ++i) {
      const auto& [name, data] = m.expected[i];
      EXPECT_EQ(id->initializers[i].name, name);
      EXPECT_EQ(id->initializers[i].sha256, Sha256Hex(data.data(), data.size())) << name;
    }
    EXPECT_EQ(model->Hashes(false).sha256, sha_hex);
    auto pairs = model->InitializerHashes();
    ASSERT_TRUE(pairs.ok());
    EXPECT_EQ((*pairs)[4].second, id->initializers[4].sha256);
  }
  // a graph-only model holds no weights to run or rewrite
  auto marked = MarkOutputs(*graph, {"t0"});
  ASSERT_FALSE(marked.ok());
  EXPECT_EQ(marked.status().code(), ErrorCode::kUnsupported);
  EXPECT_TRUE(MarkOutputs(*full, {"t0"}).ok());
}

TEST(ModelIdentity, GraphOnlyLoadFallsBackWhereTheScanStops) {
  // raw_data given twice: protobuf keeps the last one, and so must the hash
  std::string first = Bytes(8000, 1), last = Bytes(6000, 2);
  std::string t = Int(1, last.size() / 4) + Int(2, 1) + Len(8, "W") + Len(9, first) + Len(9, last);
  std::string g = Len(1, Node("X", "W", "Y")) + Len(2, "g") + Len(5, t) + Len(11, Value("X")) +
                  Len(12, Value("Y"));
  std::string path = WriteModel("twice.onnx", Int(1, 8) + Len(8, Int(2, 13)) + Len(7, g));
  auto graph = Model::Load(path, LoadMode::kGraphOnly);
  ASSERT_TRUE(graph.ok()) << graph.status().message();
  auto id = graph->Identity();
  ASSERT_TRUE(id.ok());
  ASSERT_EQ(id->initializers.size(), 1u);
  EXPECT_EQ(id->initializers[0].sha256, Sha256Hex(last.data(), last.size()));
  EXPECT_EQ(MarkOutputs(*graph, {}).status().code(), ErrorCode::kUnsupported);
}

TEST(ModelIdentity, FileHashesAreReadOnceForEveryCopyOfAModel) {
  std::string g = Len(1, Node("X", "W", "Y")) + Len(2, "g") +
                  Len(5, RawTensor("W", Bytes(8000, 1))) + Len(11, Value("X")) +
                  Len(12, Value("Y"));
  std::string bytes = Int(1, 8) + Len(8, Int(2, 13)) + Len(7, g);
  std::string path = WriteModel("hashed_once.onnx", bytes);
  auto model = Model::Load(path);
  ASSERT_TRUE(model.ok()) << model.status().message();
  const std::string sha_hex = Sha256Hex(bytes.data(), bytes.size());
  Model copy = *model;  // e.g. the two sides of a comparison of one file
  // asked at once from two threads: both get the file's hash
  auto first = std::async(std::launch::async, [&] { return model->Hashes(false); });
  FileHashes second = copy.Hashes(false);
  EXPECT_EQ(first.get().sha256, sha_hex);
  EXPECT_EQ(second.sha256, sha_hex);
  EXPECT_TRUE(second.md5.empty());
  // the file is not read again: a copy answers from the first reading
  WriteModel("hashed_once.onnx", "other bytes");
  EXPECT_EQ(copy.Hashes(false).sha256, sha_hex);
  EXPECT_EQ(copy.Hashes(false).size, bytes.size());
}

TEST(ModelIdentity, CorruptFilesFailTheSameWayInBothModes) {
  TestModel m = MakeModel(::testing::TempDir());
  for (const std::string& bytes :
       {m.bytes.substr(0, m.bytes.size() / 2), std::string("not a model at all"),
        Int(1, 8) + Len(2, "no graph")}) {
    std::string path = WriteModel("bad.onnx", bytes);
    auto full = Model::Load(path);
    auto graph = Model::Load(path, LoadMode::kGraphOnly);
    ASSERT_FALSE(full.ok());
    ASSERT_FALSE(graph.ok());
    EXPECT_EQ(graph.status().code(), full.status().code());
    EXPECT_EQ(graph.status().message(), full.status().message());
  }
}

}  // namespace
}  // namespace onnxprobe
