// KeyEncryptionKey: the asymmetric key that wraps data keys (envelope encryption). Records are
// encrypted under per-segment data keys (FieldCipher); each data key is stored only wrapped
// by a key-encryption key, so reading personal data needs the private half, which the server
// may hold only as a public key (it can then write, never read back) and an auditor brings to
// an export.
//
// Algorithms, by the key given:
//  - RSA (2048 bits or more): RSA-OAEP with SHA-256 and MGF1-SHA-256;
//  - SM2 (GB/T 32918): SM2 public-key encryption with SM3, ciphertext in GM/T 0009 DER.
// Key id: the first 16 hex digits of SHA-256 of the public key's SubjectPublicKeyInfo DER, the
// same for the private and the public half; recorded beside every wrapped key.
//
// Thread safety: immutable after loading; Wrap and Unwrap may run concurrently.
#ifndef VIGIL_CRYPTO_KEY_ENCRYPTION_KEY_H_
#define VIGIL_CRYPTO_KEY_ENCRYPTION_KEY_H_

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace vigil::crypto {

enum class KeyWrapAlgorithm { kRsaOaepSha256, kSm2 };
std::string_view KeyWrapAlgorithmName(KeyWrapAlgorithm a);  // "rsa-oaep-sha256", "sm2"

class KeyEncryptionKey {
 public:
  // A PEM private key ("PRIVATE KEY", PKCS#8; or "RSA PRIVATE KEY"): wraps and unwraps.
  static absl::StatusOr<KeyEncryptionKey> FromPrivateKeyPem(std::string_view pem);
  // A PEM public key ("PUBLIC KEY"): wraps only.
  static absl::StatusOr<KeyEncryptionKey> FromPublicKeyPem(std::string_view pem);
  // Reads a private key file. Refuses (kPermissionDenied) a file that its group or others may
  // read or write: a private key readable by other accounts is not private.
  static absl::StatusOr<KeyEncryptionKey> LoadPrivateKeyFile(const std::string& path);
  static absl::StatusOr<KeyEncryptionKey> LoadPublicKeyFile(const std::string& path);

  KeyEncryptionKey(KeyEncryptionKey&&) noexcept;
  KeyEncryptionKey& operator=(KeyEncryptionKey&&) noexcept;
  ~KeyEncryptionKey();

  KeyWrapAlgorithm algorithm() const { return algorithm_; }
  const std::string& key_id() const { return key_id_; }
  bool can_unwrap() const { return has_private_; }

  absl::StatusOr<std::string> Wrap(std::string_view data_key) const;
  // kFailedPrecondition for a public key; kDataLoss when "wrapped" does not decrypt under
  // this key (another key, or altered bytes).
  absl::StatusOr<std::string> Unwrap(std::string_view wrapped) const;

 private:
  struct Key;
  KeyEncryptionKey(std::unique_ptr<Key> key, KeyWrapAlgorithm algorithm, std::string key_id,
                   bool has_private);
  static absl::StatusOr<KeyEncryptionKey> FromKey(std::unique_ptr<Key> key, bool has_private);

  std::unique_ptr<Key> key_;
  KeyWrapAlgorithm algorithm_;
  std::string key_id_;
  bool has_private_;
};

}  // namespace vigil::crypto

#endif  // VIGIL_CRYPTO_KEY_ENCRYPTION_KEY_H_
