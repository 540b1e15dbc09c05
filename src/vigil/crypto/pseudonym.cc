#include "vigil/crypto/pseudonym.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "vigil/crypto/primitives.h"

namespace vigil::crypto {

absl::StatusOr<Pseudonymizer> Pseudonymizer::Create(Hash hash, std::string key) {
  if (key.size() < 32) {
    const size_t got = key.size();
    OPENSSL_cleanse(key.data(), key.size());
    return absl::InvalidArgumentError(
        absl::StrCat("pseudonym key: at least 32 bytes, got ", got));
  }
  return Pseudonymizer(hash, std::move(key));
}

Pseudonymizer::Pseudonymizer(Pseudonymizer&& other) noexcept
    : hash_(other.hash_), key_(std::move(other.key_)) {
  other.key_.clear();
}
Pseudonymizer& Pseudonymizer::operator=(Pseudonymizer&& other) noexcept {
  if (this != &other) {
    OPENSSL_cleanse(key_.data(), key_.size());
    hash_ = other.hash_;
    key_ = std::move(other.key_);
    other.key_.clear();
  }
  return *this;
}
Pseudonymizer::~Pseudonymizer() { OPENSSL_cleanse(key_.data(), key_.size()); }

std::string Pseudonymizer::Of(std::string_view id) const {
  if (hash_ == Hash::kHmacSm3) return HmacSm3(key_, id);
  std::string out(32, '\0');
  unsigned int n = 0;
  HMAC(EVP_sha256(), key_.data(), static_cast<int>(key_.size()),
       reinterpret_cast<const unsigned char*>(id.data()), id.size(),
       reinterpret_cast<unsigned char*>(out.data()), &n);
  return out;
}

}  // namespace vigil::crypto
