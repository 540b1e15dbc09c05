// Pseudonyms for identifiers that must be stored as lookup keys (account ids in the feature
// state): a keyed hash, so equal ids meet while the stored key says nothing about the id to a
// reader without the key. Field encryption (FieldCipher) cannot serve here: its random nonces
// make equal ids encrypt differently.
//
// HMAC-SHA-256 by default; HMAC-SM3 for the national-algorithm profile. The output is the
// 32-byte MAC; the key is at least 32 bytes.
//
// Thread safety: immutable; Of may run concurrently.
#ifndef VIGIL_CRYPTO_PSEUDONYM_H_
#define VIGIL_CRYPTO_PSEUDONYM_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace vigil::crypto {

class Pseudonymizer {
 public:
  enum class Hash { kHmacSha256, kHmacSm3 };
  // kInvalidArgument when the key is shorter than 32 bytes.
  static absl::StatusOr<Pseudonymizer> Create(Hash hash, std::string key);
  Pseudonymizer(Pseudonymizer&&) noexcept;
  Pseudonymizer& operator=(Pseudonymizer&&) noexcept;
  ~Pseudonymizer();

  // The 32-byte pseudonym of "id".
  std::string Of(std::string_view id) const;

 private:
  Pseudonymizer(Hash hash, std::string key) : hash_(hash), key_(std::move(key)) {}
  Hash hash_;
  std::string key_;
};

}  // namespace vigil::crypto

#endif  // VIGIL_CRYPTO_PSEUDONYM_H_
