// Digests through libcrypto's EVP interface: OpenSSL picks the SHA-NI / AVX2 code paths itself.
#include <openssl/evp.h>
#include <sys/stat.h>
#include <time.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <mutex>
#include <tuple>
#include <vector>

#include "common/check.h"
#include "onnxprobe/common/hash.h"

namespace onnxprobe {
namespace {

// Fetched once: an implicit fetch on every init costs a provider lookup per initializer.
const EVP_MD* Algorithm(DigestAlgorithm a) {
  static const EVP_MD* md5 = EVP_MD_fetch(nullptr, "MD5", nullptr);
  static const EVP_MD* sha256 = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  return a == DigestAlgorithm::kMd5 ? md5 : sha256;
}

}  // namespace

struct Digest::Ctx {
  EVP_MD_CTX* md = nullptr;
  ~Ctx() { EVP_MD_CTX_free(md); }
};

Digest::Digest(DigestAlgorithm algorithm) : ctx_(std::make_unique<Ctx>()) {
  ctx_->md = EVP_MD_CTX_new();
  const EVP_MD* md = Algorithm(algorithm);
  // MD5 and SHA-256 are in OpenSSL's default provider; only a FIPS-only configuration lacks MD5
  OP_CHECK(ctx_->md != nullptr && md != nullptr);
  OP_CHECK(EVP_DigestInit_ex(ctx_->md, md, nullptr) == 1);
}

Digest::~Digest() = default;
Digest::Digest(Digest&&) noexcept = default;
Digest& Digest::operator=(Digest&&) noexcept = default;

void Digest::Update(const void* data, size_t size) {
  if (size > 0) OP_CHECK(EVP_DigestUpdate(ctx_->md, data, size) == 1);
}

std::string Digest::HexDigest() {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  OP_CHECK(EVP_DigestFinal_ex(ctx_->md, out, &len) == 1);
  static const char* kHex = "0123456789abcdef";
  std::string hex;
  hex.reserve(2 * len);
  for (unsigned int i = 0; i < len; ++i) {
    hex.push_back(kHex[out[i] >> 4]);
    hex.push_back(kHex[out[i] & 0xf]);
  }
  return hex;
}

std::string Sha256Hex(const void* data, size_t size) {
  Sha256 h;
  h.Update(data, size);
  return h.HexDigest();
}

namespace {

// What makes a file the same file for the cache: a rewrite changes the modification time (or the
// size, or the inode when it is replaced by a rename).
struct FileIdentity {
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = 0;
  int64_t mtime_ns = 0;
  bool operator==(const FileIdentity& o) const {
    return std::tie(dev, ino, size, mtime_ns) == std::tie(o.dev, o.ino, o.size, o.mtime_ns);
  }
};

bool IdentityOf(const std::string& path, FileIdentity* id) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return false;
  *id = {st.st_dev, st.st_ino, st.st_size,
         int64_t(st.st_mtim.tv_sec) * 1000000000 + int64_t(st.st_mtim.tv_nsec)};
  return true;
}

std::string StreamSha256(const std::string& path, uint64_t* size) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  Sha256 h;
  std::vector<char> buf(1 << 20);
  *size = 0;
  while (in) {
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    if (in.gcount() > 0) h.Update(buf.data(), static_cast<size_t>(in.gcount()));
    *size += static_cast<uint64_t>(std::max<std::streamsize>(0, in.gcount()));
  }
  if (in.bad()) return "";
  return h.HexDigest();
}

}  // namespace

std::string FileSha256(const std::string& path, uint64_t* size) {
  uint64_t ignored = 0;
  if (size == nullptr) size = &ignored;
  static std::mutex mu;
  static std::map<std::string, std::pair<FileIdentity, std::string>> known;
  FileIdentity before;
  if (!IdentityOf(path, &before)) return StreamSha256(path, size);  // not a regular file
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = known.find(path);
    if (it != known.end() && it->second.first == before) {
      *size = static_cast<uint64_t>(before.size);
      return it->second.second;
    }
  }
  struct timespec now {};
  clock_gettime(CLOCK_REALTIME, &now);
  int64_t started_ns = int64_t(now.tv_sec) * 1000000000 + int64_t(now.tv_nsec);
  std::string sha = StreamSha256(path, size);
  FileIdentity after;
  // Remembered only when nothing changed the file while it was read, and when it was last
  // written a second or more before: file times tick coarsely (a few ms), so a file rewritten
  // within one tick of its last write, at the same size, would look unchanged (git's "racily
  // clean" entries); one older than a second cannot be rewritten into the same time.
  if (!sha.empty() && started_ns - before.mtime_ns >= 1000000000 && IdentityOf(path, &after) &&
      after == before) {
    std::lock_guard<std::mutex> lock(mu);
    known[path] = {before, sha};
  }
  return sha;
}

}  // namespace onnxprobe
