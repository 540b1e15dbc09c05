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

#include <memory>
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
  // The same into *out (its capacity reused): for the per-payment path.
  void AssignOf(std::string_view id, std::string* out) const;

  Hash hash() const { return hash_; }
  // "hmac-sha256" or "hmac-sm3".
  std::string_view name() const;
  // Names the key without revealing it: the first 16 hex digits of the pseudonym of the
  // fixed string "vigil pseudonym key id". A state records it, so that it is never read with
  // another key (its accounts would silently all be new).
  std::string key_id() const;

 private:
  struct Midstates;  // the HMAC's inner and outer hash states after the padded key
  Pseudonymizer(Hash hash, std::unique_ptr<Midstates> m);
  Hash hash_;
  std::unique_ptr<Midstates> m_;
};

}  // namespace vigil::crypto

#endif  // VIGIL_CRYPTO_PSEUDONYM_H_
