// Envelope encryption of stored records: each segment of records gets its own data key
// (FieldCipher), kept only wrapped by a key-encryption key (KeyEncryptionKey). Rotating the
// key-encryption key re-wraps the data keys; the records, encrypted under the data keys, are
// not rewritten.
//
// Thread safety: value types and pure functions.
#ifndef VIGIL_CRYPTO_ENVELOPE_H_
#define VIGIL_CRYPTO_ENVELOPE_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "vigil/crypto/field_cipher.h"
#include "vigil/crypto/key_encryption_key.h"

namespace vigil::crypto {

// A data key as stored beside the records it encrypts.
struct WrappedDataKey {
  std::string id;  // 16 hex digits, random: names the data key in records and logs
  CipherSuite suite = CipherSuite::kAes256Gcm;
  std::string kek_id;  // the key-encryption key that wrapped it (KeyEncryptionKey::key_id)
  KeyWrapAlgorithm wrap = KeyWrapAlgorithm::kRsaOaepSha256;
  std::string wrapped;  // the wrapped key bytes

  // {"id","suite","kek_id","wrap","wrapped" (base64)}.
  std::string ToJson() const;
  // kInvalidArgument naming the field that is missing or malformed.
  static absl::StatusOr<WrappedDataKey> FromJson(std::string_view json);
  bool operator==(const WrappedDataKey&) const = default;
};

struct SealedSegmentKey {
  FieldCipher cipher;      // encrypts the segment's fields
  WrappedDataKey wrapped;  // to store
};

// A fresh data key for "suite", wrapped by "kek" (its public half is enough).
absl::StatusOr<SealedSegmentKey> NewSegmentKey(CipherSuite suite, const KeyEncryptionKey& kek);

// The cipher of a stored data key. kFailedPrecondition when "kek" is not the key that wrapped
// it (naming both key ids) or cannot unwrap; kDataLoss when it does not unwrap, or unwraps to
// a key of the wrong length for its suite (an unwrap hook's answer included); an unwrap hook's
// errors otherwise.
absl::StatusOr<FieldCipher> OpenSegmentKey(const WrappedDataKey& wrapped,
                                           const KeyEncryptionKey& kek);

// The same data key wrapped by "to" instead of "from" (key rotation); the data key never
// leaves this call. Errors of unwrapping as OpenSegmentKey's.
absl::StatusOr<WrappedDataKey> RewrapSegmentKey(const WrappedDataKey& wrapped,
                                                const KeyEncryptionKey& from,
                                                const KeyEncryptionKey& to);

}  // namespace vigil::crypto

#endif  // VIGIL_CRYPTO_ENVELOPE_H_
