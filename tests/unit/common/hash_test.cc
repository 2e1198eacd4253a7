#include "onnxprobe/common/hash.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

namespace onnxprobe {
namespace {

// Reference digests from FIPS 180-2 and RFC 1321 test vectors.
TEST(Sha256, KnownVectors) {
  EXPECT_EQ(Sha256Hex("", 0), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc", 3),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  std::string two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  EXPECT_EQ(Sha256Hex(two_blocks.data(), two_blocks.size()),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, StreamingEqualsOneShot) {
  std::string data(1000, 'x');
  for (size_t i = 0; i < data.size(); ++i) data[i] = char(i * 7);
  Sha256 h;
  for (size_t i = 0; i < data.size(); i += 37)
    h.Update(data.data() + i, std::min<size_t>(37, data.size() - i));
  EXPECT_EQ(h.HexDigest(), Sha256Hex(data.data(), data.size()));
}

TEST(Md5, KnownVectors) {
  auto md5 = [](const std::string& s) {
    Md5 m;
    m.Update(s.data(), s.size());
    return m.HexDigest();
  };
  EXPECT_EQ(md5(""), "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(md5("abc"), "900150983cd24fb0d6963f7d28e17f72");
  EXPECT_EQ(md5("12345678901234567890123456789012345678901234567890123456789012345678901234567890"),
            "57edf4a22be3c955ac49da2e2107b67a");
}

TEST(Md5, StreamingEqualsOneShot) {
  std::string data(1000, 'x');
  for (size_t i = 0; i < data.size(); ++i) data[i] = char(i * 13);
  Md5 one, parts;
  one.Update(data.data(), data.size());
  for (size_t i = 0; i < data.size(); i += 29)
    parts.Update(data.data() + i, std::min<size_t>(29, data.size() - i));
  EXPECT_EQ(parts.HexDigest(), one.HexDigest());
}

void Write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
}

// Sets the file's modification time `seconds_ago` seconds in the past.
void Age(const std::string& path, int seconds_ago) {
  struct timespec times[2] = {{0, UTIME_OMIT}, {time(nullptr) - seconds_ago, 0}};
  ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), times, 0), 0);
}

const char kAbc[] = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
const char kAbd[] = "a52d159f262b2c6ddb724a61840befc36eb30c88877a4030b65cbe86298449c9";

TEST(FileSha256, AFileRewrittenAtOnceAtTheSameSizeIsHashedAgain) {
  std::string path = ::testing::TempDir() + "/racy.bin";
  Write(path, "abc");
  EXPECT_EQ(FileSha256(path), kAbc);
  Write(path, "abd");  // within the same tick of the file clock, likely
  EXPECT_EQ(FileSha256(path), kAbd);
}

TEST(FileSha256, AnOlderFileIsRememberedUntilItChanges) {
  std::string path = ::testing::TempDir() + "/old.bin";
  Write(path, "abc");
  Age(path, 60);
  EXPECT_EQ(FileSha256(path), kAbc);
  EXPECT_EQ(FileSha256(path), kAbc);  // from the cache
  Write(path, "abd");                 // same size, a new modification time
  Age(path, 30);
  EXPECT_EQ(FileSha256(path), kAbd);
  EXPECT_EQ(FileSha256(::testing::TempDir() + "/no such file"), "");
}

}  // namespace
}  // namespace onnxprobe
