#include "vigil/audit/log_hash.h"

#include <openssl/evp.h>

#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "vigil/common/check.h"

namespace vigil::audit {
namespace {

// Fetched once: EVP_get_digestbyname per call would cost a provider lookup per hash.
const EVP_MD* Md(HashAlgorithm algorithm) {
  static const EVP_MD* const sha256 = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  static const EVP_MD* const sm3 = EVP_MD_fetch(nullptr, "SM3", nullptr);
  const EVP_MD* md = algorithm == HashAlgorithm::kSm3 ? sm3 : sha256;
  // Fails only when OpenSSL's default provider is missing, which no hash could survive.
  VIGIL_CHECK(md != nullptr);
  return md;
}

// One reusable context per thread: EVP_MD_CTX_new per hash would allocate on every leaf.
class Hasher {
 public:
  Hasher() : ctx_(EVP_MD_CTX_new()) { VIGIL_CHECK(ctx_ != nullptr); }
  ~Hasher() { EVP_MD_CTX_free(ctx_); }
  Hasher(const Hasher&) = delete;
  Hasher& operator=(const Hasher&) = delete;

  void Begin(HashAlgorithm algorithm) {
    VIGIL_CHECK(EVP_DigestInit_ex2(ctx_, Md(algorithm), nullptr) == 1);
  }
  void Add(const void* data, size_t size) {
    VIGIL_CHECK(EVP_DigestUpdate(ctx_, data, size) == 1);
  }
  Hash End() {
    Hash out;
    unsigned int length = 0;
    VIGIL_CHECK(EVP_DigestFinal_ex(ctx_, out.data(), &length) == 1 && length == out.size());
    return out;
  }

 private:
  EVP_MD_CTX* ctx_;
};

Hasher& ThreadHasher() {
  thread_local Hasher hasher;
  return hasher;
}

}  // namespace

std::string_view HashAlgorithmName(HashAlgorithm algorithm) {
  return algorithm == HashAlgorithm::kSm3 ? "sm3" : "sha256";
}

absl::StatusOr<HashAlgorithm> ParseHashAlgorithm(std::string_view name) {
  const std::string lower = absl::AsciiStrToLower(absl::string_view(name.data(), name.size()));
  if (lower == "sha256" || lower == "sha-256") return HashAlgorithm::kSha256;
  if (lower == "sm3") return HashAlgorithm::kSm3;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown hash algorithm \"", absl::string_view(name.data(), name.size()),
                   "\": expected \"sha256\" or \"sm3\""));
}

std::string HashHex(const Hash& hash) {
  return absl::BytesToHexString(
      absl::string_view(reinterpret_cast<const char*>(hash.data()), hash.size()));
}

absl::StatusOr<Hash> ParseHashHex(std::string_view hex) {
  Hash out;
  if (hex.size() != 2 * out.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("a hash is 64 hex digits, got ", hex.size(), " characters"));
  }
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  for (size_t i = 0; i < out.size(); ++i) {
    const int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("a hash is 64 hex digits; character ", 2 * i + (hi < 0 ? 1 : 2),
                       " is not one"));
    }
    out[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  return out;
}

Hash Digest(HashAlgorithm algorithm, std::string_view bytes) {
  Hasher& h = ThreadHasher();
  h.Begin(algorithm);
  h.Add(bytes.data(), bytes.size());
  return h.End();
}

Hash LeafHash(HashAlgorithm algorithm, std::string_view record) {
  static constexpr uint8_t kLeafPrefix = 0x00;
  Hasher& h = ThreadHasher();
  h.Begin(algorithm);
  h.Add(&kLeafPrefix, 1);
  h.Add(record.data(), record.size());
  return h.End();
}

Hash NodeHash(HashAlgorithm algorithm, const Hash& left, const Hash& right) {
  // One update of 65 bytes instead of three calls: node hashing dominates proof building.
  uint8_t buffer[1 + 2 * sizeof(Hash)];
  buffer[0] = 0x01;
  std::memcpy(buffer + 1, left.data(), left.size());
  std::memcpy(buffer + 1 + left.size(), right.data(), right.size());
  Hasher& h = ThreadHasher();
  h.Begin(algorithm);
  h.Add(buffer, sizeof(buffer));
  return h.End();
}

Hash EmptyRootHash(HashAlgorithm algorithm) { return Digest(algorithm, {}); }

}  // namespace vigil::audit
