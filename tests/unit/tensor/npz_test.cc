#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "onnxprobe/tensor/npy.h"

namespace onnxprobe {
namespace {

std::string TempPath(const std::string& name) { return ::testing::TempDir() + "/" + name; }

std::string Slurp(const std::string& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void Spit(const std::string& p, const std::string& d) { std::ofstream(p, std::ios::binary) << d; }

std::string WriteSample(const std::string& path) {
  NpzWriter w;
  EXPECT_TRUE(w.Open(path).ok());
  auto t = *Tensor::Allocate(DType::kFloat32, {4});
  for (int i = 0; i < 4; ++i) t.data_as<float>()[i] = float(i);
  EXPECT_TRUE(w.Add("a", t).ok());
  EXPECT_TRUE(w.AddRaw("manifest.json", "{}").ok());
  EXPECT_TRUE(w.Finish().ok());
  return Slurp(path);
}

TEST(Npz, WriterOutputReadsBackAndSkipsSideEntries) {
  std::string p = TempPath("w.npz");
  WriteSample(p);
  auto r = ReadNpz(p);
  ASSERT_TRUE(r.ok()) << r.status().message();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_EQ((*r)[0].first, "a");
  EXPECT_EQ((*r)[0].second.data_as<float>()[3], 3.0f);
}

TEST(Npz, AbandonedWriterLeavesNothing) {
  std::string p = TempPath("abandoned.npz");
  std::remove(p.c_str());
  {
    NpzWriter w;
    ASSERT_TRUE(w.Open(p).ok());
    ASSERT_TRUE(w.Add("a", *Tensor::Allocate(DType::kInt8, {3})).ok());
  }
  EXPECT_FALSE(std::ifstream(p).good());
}

TEST(Npz, LyingSizesAndDamageRejected) {
  std::string p = TempPath("lie.npz");
  std::string good = WriteSample(p);
  // central directory record of "a.npy": compressed and uncompressed sizes at offsets 20/24
  size_t cd = good.find("PK\x01\x02");
  ASSERT_NE(cd, std::string::npos);
  std::string lie = good;
  lie[cd + 20] = '\xff';
  lie[cd + 21] = '\xff';
  lie[cd + 22] = '\xff';
  lie[cd + 23] = '\x7f';
  Spit(p, lie);
  auto r = ReadNpz(p);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("a.npy"), std::string::npos);

  std::string crc = good;
  crc[cd + 16] ^= 1;
  Spit(p, crc);
  EXPECT_FALSE(ReadNpz(p).ok());

  Spit(p, good.substr(0, good.size() / 2));
  EXPECT_EQ(ReadNpz(p).status().code(), ErrorCode::kCorrupt);
  Spit(p, "");
  EXPECT_EQ(ReadNpz(p).status().code(), ErrorCode::kCorrupt);
  EXPECT_EQ(ReadNpz(TempPath("does-not-exist.npz")).status().code(), ErrorCode::kNotFound);
  EXPECT_EQ(ReadNpz(::testing::TempDir()).status().code(), ErrorCode::kInvalidArgument);
}

}  // namespace
}  // namespace onnxprobe
