#include "vigil/crypto/field_cipher.h"

#include <openssl/crypto.h>

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "vigil/common/status_macros.h"
#include "vigil/common/string_view.h"
#include "vigil/crypto/primitives.h"

namespace vigil::crypto {
namespace {

constexpr size_t kSm4MacKeyBytes = 32;

size_t NonceBytes(CipherSuite suite) {
  return suite == CipherSuite::kAes256Gcm ? kGcmNonceBytes : kSm4BlockBytes;
}
size_t TagBytes(CipherSuite suite) {
  return suite == CipherSuite::kAes256Gcm ? kGcmTagBytes : kSm3Bytes;
}

// suite || counter || len(aad) as 8 bytes big-endian || aad || ciphertext.
std::string MacInput(CipherSuite suite, std::string_view counter, std::string_view aad,
                     std::string_view ciphertext) {
  std::string in;
  in.reserve(1 + counter.size() + 8 + aad.size() + ciphertext.size());
  in.push_back(static_cast<char>(suite));
  in.append(counter);
  for (int shift = 56; shift >= 0; shift -= 8) {
    in.push_back(static_cast<char>(static_cast<uint64_t>(aad.size()) >> shift));
  }
  in.append(aad);
  in.append(ciphertext);
  return in;
}

}  // namespace

std::string_view CipherSuiteName(CipherSuite suite) {
  return suite == CipherSuite::kAes256Gcm ? "aes-256-gcm" : "sm4-ctr-hmac-sm3";
}

absl::StatusOr<CipherSuite> ParseCipherSuite(std::string_view name) {
  if (name == "aes-256-gcm") return CipherSuite::kAes256Gcm;
  if (name == "sm4-ctr-hmac-sm3") return CipherSuite::kSm4CtrHmacSm3;
  return absl::InvalidArgumentError(absl::StrCat("unknown cipher suite '", ToAbsl(name),
                                                 "': use aes-256-gcm or sm4-ctr-hmac-sm3"));
}

size_t DataKeyBytes(CipherSuite suite) {
  return suite == CipherSuite::kAes256Gcm ? kAes256KeyBytes : kSm4KeyBytes + kSm4MacKeyBytes;
}

absl::StatusOr<FieldCipher> FieldCipher::Create(CipherSuite suite, std::string data_key) {
  if (data_key.size() != DataKeyBytes(suite)) {
    const size_t got = data_key.size();
    OPENSSL_cleanse(data_key.data(), data_key.size());
    return absl::InvalidArgumentError(absl::StrCat("a ", ToAbsl(CipherSuiteName(suite)),
                                                   " data key is ", DataKeyBytes(suite),
                                                   " bytes, got ", got));
  }
  return FieldCipher(suite, std::move(data_key));
}

absl::StatusOr<std::string> FieldCipher::NewDataKey(CipherSuite suite) {
  return RandomBytes(DataKeyBytes(suite));
}

FieldCipher::FieldCipher(FieldCipher&& other) noexcept
    : suite_(other.suite_), key_(std::move(other.key_)) {
  OPENSSL_cleanse(other.key_.data(), other.key_.size());
  other.key_.clear();
}

FieldCipher& FieldCipher::operator=(FieldCipher&& other) noexcept {
  if (this != &other) {
    OPENSSL_cleanse(key_.data(), key_.size());
    suite_ = other.suite_;
    key_ = std::move(other.key_);
    OPENSSL_cleanse(other.key_.data(), other.key_.size());
    other.key_.clear();
  }
  return *this;
}

FieldCipher::~FieldCipher() { OPENSSL_cleanse(key_.data(), key_.size()); }

absl::StatusOr<std::string> FieldCipher::Seal(std::string_view plaintext,
                                              std::string_view aad) const {
  VIGIL_ASSIGN_OR_RETURN(const std::string nonce, RandomBytes(NonceBytes(suite_)));
  std::string sealed(1, static_cast<char>(suite_));
  sealed += nonce;
  if (suite_ == CipherSuite::kAes256Gcm) {
    VIGIL_ASSIGN_OR_RETURN(std::string body, Aes256GcmSeal(key_, nonce, aad, plaintext));
    sealed += body;
    return sealed;
  }
  const std::string_view key(key_);
  VIGIL_ASSIGN_OR_RETURN(const std::string ciphertext,
                         Sm4Ctr(key.substr(0, kSm4KeyBytes), nonce, plaintext));
  sealed += ciphertext;
  sealed += HmacSm3(key.substr(kSm4KeyBytes), MacInput(suite_, nonce, aad, ciphertext));
  return sealed;
}

absl::StatusOr<std::string> FieldCipher::Open(std::string_view sealed,
                                              std::string_view aad) const {
  const size_t nonce_bytes = NonceBytes(suite_), tag_bytes = TagBytes(suite_);
  if (sealed.empty() || static_cast<uint8_t>(sealed[0]) != static_cast<uint8_t>(suite_)) {
    return absl::DataLossError(absl::StrCat("encrypted field: not sealed with ",
                                            ToAbsl(CipherSuiteName(suite_))));
  }
  if (sealed.size() < 1 + nonce_bytes + tag_bytes) {
    return absl::DataLossError("encrypted field: shorter than its nonce and tag");
  }
  const std::string_view nonce = sealed.substr(1, nonce_bytes);
  const std::string_view body = sealed.substr(1 + nonce_bytes);
  if (suite_ == CipherSuite::kAes256Gcm) return Aes256GcmOpen(key_, nonce, aad, body);
  const std::string_view key(key_);
  const std::string_view ciphertext = body.substr(0, body.size() - tag_bytes);
  const std::string_view tag = body.substr(ciphertext.size());
  const std::string expected =
      HmacSm3(key.substr(kSm4KeyBytes), MacInput(suite_, nonce, aad, ciphertext));
  if (!ConstantTimeEquals(expected, tag)) {
    return absl::DataLossError(
        "sm4-ctr-hmac-sm3: authentication failed (wrong key or associated data, or altered "
        "bytes)");
  }
  return Sm4Ctr(key.substr(0, kSm4KeyBytes), nonce, ciphertext);
}

}  // namespace vigil::crypto
