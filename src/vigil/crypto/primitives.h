// The symmetric primitives vigil uses on personal data, as thin value-in/value-out functions
// over OpenSSL 3's EVP interface, each checked against published known answers
// (primitives_test.cc):
//  - SM3 (GB/T 32905) and HMAC-SM3;
//  - SM4 (GB/T 32907): one block, for known-answer tests, and CTR mode. OpenSSL 3.0 has no
//    SM4-GCM, so the national-algorithm profile authenticates SM4-CTR with HMAC-SM3
//    (field_cipher.h);
//  - AES-256-GCM (NIST SP 800-38D) with a 96-bit nonce and a 128-bit tag.
// Errors are statuses naming the primitive and the reason (a key of the wrong length, an
// authentication failure), never key bytes.
//
// Thread safety: pure functions.
#ifndef VIGIL_CRYPTO_PRIMITIVES_H_
#define VIGIL_CRYPTO_PRIMITIVES_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace vigil::crypto {

inline constexpr size_t kSm3Bytes = 32;
inline constexpr size_t kSm4KeyBytes = 16;
inline constexpr size_t kSm4BlockBytes = 16;
inline constexpr size_t kAes256KeyBytes = 32;
inline constexpr size_t kGcmNonceBytes = 12;
inline constexpr size_t kGcmTagBytes = 16;

// The 32-byte SM3 digest of "data".
std::string Sm3(std::string_view data);

// HMAC-SM3 of "data" under "key" (any length): 32 bytes.
std::string HmacSm3(std::string_view key, std::string_view data);

// One SM4 block (16 bytes) encrypted under a 16-byte key (ECB of one block).
absl::StatusOr<std::string> Sm4EncryptBlock(std::string_view key, std::string_view block);

// SM4 in CTR mode (the counter is the 16-byte "iv", incremented as a 128-bit big-endian
// number): encryption and decryption are the same operation. Any length of "data".
absl::StatusOr<std::string> Sm4Ctr(std::string_view key, std::string_view iv, std::string_view data);

// AES-256-GCM: ciphertext followed by the 16-byte tag.
absl::StatusOr<std::string> Aes256GcmSeal(std::string_view key, std::string_view nonce,
                                          std::string_view aad, std::string_view plaintext);
// The plaintext of ciphertext || tag, or kDataLoss when the tag does not verify (wrong key,
// nonce, associated data, or altered bytes).
absl::StatusOr<std::string> Aes256GcmOpen(std::string_view key, std::string_view nonce,
                                          std::string_view aad, std::string_view sealed);

// "n" bytes from OpenSSL's CSPRNG; kInternal if it cannot be seeded.
absl::StatusOr<std::string> RandomBytes(size_t n);

// a == b in time that depends only on the lengths.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

}  // namespace vigil::crypto

#endif  // VIGIL_CRYPTO_PRIMITIVES_H_
