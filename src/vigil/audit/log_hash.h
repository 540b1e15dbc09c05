// The audit log's hash function and RFC 9162 (Certificate Transparency 2.0) tree hashing:
//
//   leaf hash  = H(0x00 || record bytes)
//   node hash  = H(0x01 || left || right)
//   empty tree = H()
//
// H is SHA-256 by default or SM3 (GB/T 32905), both 32 bytes, both through OpenSSL. A log
// records its algorithm in its header; one log never mixes them.
//
// Thread safety: free functions, safe for concurrent use.
#ifndef VIGIL_AUDIT_LOG_HASH_H_
#define VIGIL_AUDIT_LOG_HASH_H_

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace vigil::audit {

enum class HashAlgorithm : uint8_t { kSha256 = 1, kSm3 = 2 };

// "sha256", "sm3".
std::string_view HashAlgorithmName(HashAlgorithm algorithm);
// Accepts the names above (case-insensitive) and "sha-256". kInvalidArgument otherwise.
absl::StatusOr<HashAlgorithm> ParseHashAlgorithm(std::string_view name);

using Hash = std::array<uint8_t, 32>;

// Lower-case hex, 64 characters.
std::string HashHex(const Hash& hash);
// 64 hex digits (either case); kInvalidArgument otherwise.
absl::StatusOr<Hash> ParseHashHex(std::string_view hex);

// H(bytes).
Hash Digest(HashAlgorithm algorithm, std::string_view bytes);
// H(0x00 || record).
Hash LeafHash(HashAlgorithm algorithm, std::string_view record);
// H(0x01 || left || right).
Hash NodeHash(HashAlgorithm algorithm, const Hash& left, const Hash& right);
// The root of the empty tree: H() (RFC 9162 section 2.1.1).
Hash EmptyRootHash(HashAlgorithm algorithm);

}  // namespace vigil::audit

#endif  // VIGIL_AUDIT_LOG_HASH_H_
