// Content hashes used to prove model identity (file MD5/SHA-256, per-initializer SHA-256).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "onnxprobe/status.h"

namespace onnxprobe {

class Sha256 {
 public:
  Sha256();
  void Update(const void* data, size_t size);
  // Returns the lowercase hex digest; the object must not be updated afterwards.
  std::string HexDigest();

 private:
  void Block(const uint8_t* p);
  uint32_t h_[8];
  uint8_t buf_[64];
  size_t buf_len_ = 0;
  uint64_t total_ = 0;
};

class Md5 {
 public:
  Md5();
  void Update(const void* data, size_t size);
  std::string HexDigest();

 private:
  void Block(const uint8_t* p);
  uint32_t h_[4];
  uint8_t buf_[64];
  size_t buf_len_ = 0;
  uint64_t total_ = 0;
};

struct FileHashes {
  std::string md5;
  std::string sha256;
  uint64_t size = 0;
};

std::string Sha256Hex(const void* data, size_t size);

}  // namespace onnxprobe
