// Digests through libcrypto's EVP interface: OpenSSL picks the SHA-NI / AVX2 code paths itself.
#include <openssl/evp.h>

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

}  // namespace onnxprobe
