#include "vigil/common/sha256.h"

#include <openssl/evp.h>

#include "vigil/common/check.h"

namespace vigil {

std::array<uint8_t, 32> Sha256(std::string_view bytes) {
  std::array<uint8_t, 32> digest{};
  unsigned int length = 0;
  // Fails only when OpenSSL itself is broken (no SHA-256 provider).
  VIGIL_CHECK(
      EVP_Digest(bytes.data(), bytes.size(), digest.data(), &length, EVP_sha256(), nullptr) == 1 &&
      length == digest.size());
  return digest;
}

std::string Sha256Hex(std::string_view bytes) { return DigestHex(Sha256(bytes)); }

std::string DigestHex(const std::array<uint8_t, 32>& digest) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex(2 * digest.size(), '0');
  for (size_t i = 0; i < digest.size(); ++i) {
    hex[2 * i] = kHex[digest[i] >> 4];
    hex[2 * i + 1] = kHex[digest[i] & 15];
  }
  return hex;
}

}  // namespace vigil
