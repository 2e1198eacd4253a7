#include "onnxprobe/tensor/npy.h"

#include <gtest/gtest.h>

#include <string>

namespace onnxprobe {
namespace {

std::string NpyV1(const std::string& dict, const std::string& payload = "") {
  std::string h = dict;
  while ((10 + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(h.size() & 0xff);
  out += static_cast<char>(h.size() >> 8);
  return out + h + payload;
}

Status ParseStatus(const std::string& bytes) {
  return ParseNpy(bytes.data(), bytes.size(), "t.npy").status();
}

TEST(Npy, HeaderWeWriteIsWhatNumpyWrites) {
  // numpy 1.24: np.save of np.zeros((2, 3), np.float32) starts with this header
  std::string expected = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
  std::string h = NpyHeaderBytes(DType::kFloat32, {2, 3});
  EXPECT_EQ(h.size() % 64, 0u);
  EXPECT_EQ(h.substr(10, expected.size()), expected);
  EXPECT_NE(NpyHeaderBytes(DType::kInt64, {5}).find("'shape': (5,)"), std::string::npos);
  EXPECT_NE(
      NpyHeaderBytes(DType::kBool, {}).find("'descr': '|b1', 'fortran_order': False, 'shape': ()"),
      std::string::npos);
}

TEST(Npy, ParsesWhatItWrites) {
  std::string h = NpyHeaderBytes(DType::kInt16, {3});
  std::string bytes = h + std::string("\x01\x00\x02\x00\xff\xff", 6);
  auto t = ParseNpy(bytes.data(), bytes.size(), "x");
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->data_as<int16_t>()[2], -1);
}

TEST(Npy, HostileHeadersRejectedBeforeAllocation) {
  // claims 10^12 elements with no data: must fail on the size check, not allocate
  EXPECT_EQ(
      ParseStatus(NpyV1("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000, 1000000), }"))
          .code(),
      ErrorCode::kCorrupt);
  EXPECT_EQ(
      ParseStatus(
          NpyV1("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }"))
          .code(),
      ErrorCode::kInvalidArgument);
  EXPECT_EQ(
      ParseStatus(NpyV1("{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 3), }")).code(),
      ErrorCode::kInvalidArgument);
  EXPECT_EQ(
      ParseStatus(
          NpyV1("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }"))
          .code(),
      ErrorCode::kInvalidArgument);
}

TEST(Npy, BadDescriptionsNamed) {
  auto s = ParseStatus(
      NpyV1("{'descr': '<U7', 'fortran_order': False, 'shape': (1,), }", std::string(28, 'a')));
  EXPECT_EQ(s.code(), ErrorCode::kUnsupported);
  EXPECT_NE(s.message().find("t.npy"), std::string::npos);
  EXPECT_NE(s.message().find("<U7"), std::string::npos);
  EXPECT_EQ(ParseStatus(NpyV1("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }")).code(),
            ErrorCode::kUnsupported);
  EXPECT_EQ(ParseStatus(NpyV1("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }"))
                .code(),
            ErrorCode::kUnsupported);
  EXPECT_EQ(ParseStatus(NpyV1("{'fortran_order': False, 'shape': (1,), }")).code(),
            ErrorCode::kCorrupt);
  EXPECT_EQ(ParseStatus(NpyV1("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (1,), }")).code(),
            ErrorCode::kCorrupt);
}

TEST(Npy, TruncatedAndGarbage) {
  EXPECT_EQ(ParseStatus("").code(), ErrorCode::kCorrupt);
  EXPECT_EQ(ParseStatus("not numpy at all").code(), ErrorCode::kCorrupt);
  std::string whole = NpyHeaderBytes(DType::kFloat32, {4}) + std::string(16, '\0');
  EXPECT_TRUE(ParseStatus(whole).ok());
  EXPECT_EQ(ParseStatus(whole.substr(0, whole.size() - 1)).code(), ErrorCode::kCorrupt);
  EXPECT_EQ(ParseStatus(whole.substr(0, 20)).code(), ErrorCode::kCorrupt);
  std::string v9 = whole;
  v9[6] = 9;
  EXPECT_EQ(ParseStatus(v9).code(), ErrorCode::kUnsupported);
}

TEST(Npy, FortranOrderConvertedToC) {
  // F-order 2x3 [[1,2,3],[4,5,6]] is stored column by column: 1 4 2 5 3 6
  std::string payload;
  for (int v : {1, 4, 2, 5, 3, 6}) payload.append(reinterpret_cast<const char*>(&v), 4);
  std::string bytes = NpyV1("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }", payload);
  auto t = ParseNpy(bytes.data(), bytes.size(), "f.npy");
  ASSERT_TRUE(t.ok());
  for (int i = 0; i < 6; ++i) EXPECT_EQ(t->data_as<int32_t>()[i], i + 1);
}

}  // namespace
}  // namespace onnxprobe
