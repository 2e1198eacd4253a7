// Content hashes used to prove model identity (file MD5/SHA-256, per-initializer SHA-256),
// computed by libcrypto (hardware SHA and MD5 code paths where the CPU has them).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "onnxprobe/common/status.h"

namespace onnxprobe {

enum class DigestAlgorithm { kMd5, kSha256 };

// A streaming digest. Movable, not copyable.
class Digest {
 public:
  explicit Digest(DigestAlgorithm algorithm);
  ~Digest();
  Digest(Digest&&) noexcept;
  Digest& operator=(Digest&&) noexcept;

  void Update(const void* data, size_t size);
  // Returns the lowercase hex digest; the object must not be updated afterwards.
  std::string HexDigest();

 private:
  struct Ctx;
  std::unique_ptr<Ctx> ctx_;
};

class Sha256 : public Digest {
 public:
  Sha256() : Digest(DigestAlgorithm::kSha256) {}
};

class Md5 : public Digest {
 public:
  Md5() : Digest(DigestAlgorithm::kMd5) {}
};

struct FileHashes {
  std::string md5;
  std::string sha256;
  uint64_t size = 0;
};

std::string Sha256Hex(const void* data, size_t size);

// SHA-256 of the file at `path` (lowercase hex), streamed; remembered for this process by the
// file's identity (device, inode, size, modification time), so a file hashed again while it is
// unchanged is not read again (a model checked against its baseline, then opened for the
// comparison; a runtime library named twice). "" when it cannot be read. `size`, when given,
// receives the bytes hashed.
std::string FileSha256(const std::string& path, uint64_t* size = nullptr);

}  // namespace onnxprobe
