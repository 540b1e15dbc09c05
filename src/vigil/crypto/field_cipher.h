// FieldCipher: encrypts one field of a stored record (a name, an account, remittance text)
// under a data key, authenticated together with associated data that binds the ciphertext to
// its place (record and field), so a ciphertext moved to another record or field, or altered,
// does not open.
//
// Two suites:
//  - kAes256Gcm (the default): 32-byte key, random 12-byte nonce, 16-byte tag.
//  - kSm4CtrHmacSm3 (the national-algorithm profile): 48-byte key, the first 16 bytes for
//    SM4-CTR and the last 32 for HMAC-SM3; random 16-byte counter block; the tag is the full
//    HMAC-SM3 over suite || counter || len(aad) (8 bytes, big-endian) || aad || ciphertext
//    (encrypt-then-MAC), compared in constant time. OpenSSL 3.0 has no SM4-GCM.
//
// Sealed format: suite byte (1 or 2) || nonce || ciphertext || tag. Random nonces: a data key
// must seal fewer than 2^32 fields (NIST SP 800-38D's bound for random 96-bit nonces); data
// keys are per audit segment, far below that.
//
// Thread safety: immutable after Create; Seal and Open may run concurrently.
#ifndef VIGIL_CRYPTO_FIELD_CIPHER_H_
#define VIGIL_CRYPTO_FIELD_CIPHER_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace vigil::crypto {

enum class CipherSuite : uint8_t { kAes256Gcm = 1, kSm4CtrHmacSm3 = 2 };

// "aes-256-gcm", "sm4-ctr-hmac-sm3".
std::string_view CipherSuiteName(CipherSuite suite);
// The suite of a name above; kInvalidArgument listing the names otherwise.
absl::StatusOr<CipherSuite> ParseCipherSuite(std::string_view name);
// Bytes of a data key for "suite": 32 or 48.
size_t DataKeyBytes(CipherSuite suite);

class FieldCipher {
 public:
  // Fails (kInvalidArgument) when "data_key" is not DataKeyBytes(suite) long.
  static absl::StatusOr<FieldCipher> Create(CipherSuite suite, std::string data_key);
  // A fresh random data key for "suite".
  static absl::StatusOr<std::string> NewDataKey(CipherSuite suite);

  FieldCipher(FieldCipher&& other) noexcept;
  FieldCipher& operator=(FieldCipher&& other) noexcept;
  FieldCipher(const FieldCipher&) = delete;
  FieldCipher& operator=(const FieldCipher&) = delete;
  ~FieldCipher();  // wipes the key

  CipherSuite suite() const { return suite_; }

  absl::StatusOr<std::string> Seal(std::string_view plaintext, std::string_view aad) const;
  // kDataLoss when the value is too short, of another suite, or does not authenticate under
  // this key and "aad"; the message never includes key or plaintext bytes.
  absl::StatusOr<std::string> Open(std::string_view sealed, std::string_view aad) const;

 private:
  FieldCipher(CipherSuite suite, std::string key) : suite_(suite), key_(std::move(key)) {}

  CipherSuite suite_;
  std::string key_;
};

}  // namespace vigil::crypto

#endif  // VIGIL_CRYPTO_FIELD_CIPHER_H_
