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
// Where the private half never leaves a key service (an HSM, a KMS) that decrypts on request,
// the public half plus an unwrap hook (WithUnwrapHook) unwraps through that service;
// crypto/kek_command.h makes such a hook from a command.
//
// Thread safety: immutable after loading; Wrap and Unwrap may run concurrently (an unwrap hook
// must allow that).
#ifndef VIGIL_CRYPTO_KEY_ENCRYPTION_KEY_H_
#define VIGIL_CRYPTO_KEY_ENCRYPTION_KEY_H_

#include <functional>
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

  // Unwraps "wrapped" (the bytes Wrap made) with the private half held elsewhere: the data key,
  // or an error saying why not, never holding key bytes.
  using UnwrapHook = std::function<absl::StatusOr<std::string>(std::string_view wrapped)>;
  // "public_key" (its public half is enough: it gives the algorithm and the key id, and wraps)
  // that unwraps by calling "hook", also when it holds the private half. can_unwrap() is true.
  // Errors of the hook keep their code, with the key id added. What the hook answers is not
  // checked here: OpenSegmentKey and RewrapSegmentKey check that it is a data key of the right
  // length (crypto/envelope.h). A null hook leaves "public_key" as it was.
  static KeyEncryptionKey WithUnwrapHook(KeyEncryptionKey public_key, UnwrapHook hook);

  KeyEncryptionKey(KeyEncryptionKey&&) noexcept;
  KeyEncryptionKey& operator=(KeyEncryptionKey&&) noexcept;
  ~KeyEncryptionKey();

  KeyWrapAlgorithm algorithm() const { return algorithm_; }
  const std::string& key_id() const { return key_id_; }
  bool can_unwrap() const { return has_private_ || unwrap_hook_ != nullptr; }
  // Whether Unwrap calls an unwrap hook (WithUnwrapHook) rather than a private key it holds.
  bool has_unwrap_hook() const { return unwrap_hook_ != nullptr; }

  absl::StatusOr<std::string> Wrap(std::string_view data_key) const;
  // kFailedPrecondition for a public key (without an unwrap hook); kDataLoss when "wrapped"
  // does not decrypt under this key (another key, or altered bytes); with an unwrap hook, the
  // hook's answer or error.
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
  UnwrapHook unwrap_hook_;  // null: unwrap with the private key
};

}  // namespace vigil::crypto

#endif  // VIGIL_CRYPTO_KEY_ENCRYPTION_KEY_H_
