// The audit log's signing keys: a LogSigner signs tree heads (their canonical bytes are built
// elsewhere) with a private key read from a PEM file; examiners check them with a LogVerifier
// made from the public key.
//
//   VIGIL_ASSIGN_OR_RETURN(auto signer, LogSigner::FromPemFile("/etc/vigil/audit_key.pem"));
//   VIGIL_ASSIGN_OR_RETURN(std::string signature, signer->Sign(tree_head_bytes));
//   ...
//   VIGIL_ASSIGN_OR_RETURN(auto verifier, LogVerifier::FromPem(signer->PublicKeyPem(), "log"));
//   VIGIL_RETURN_IF_ERROR(verifier->Verify(tree_head_bytes, signature));
//
// Two algorithms, both through OpenSSL 3:
//   Ed25519  pure EdDSA (RFC 8032 section 5.1) over the message itself: 64-byte signatures,
//            deterministic.
//   SM2      GB/T 32918.2 signature over Z || message with SM3 as the hash (GB/T 32905), where Z
//            binds the public key and the distinguishing identifier kSm2DistinguishingId, the
//            default of GB/T 35276. Randomized; the signature is DER SEQUENCE { INTEGER r,
//            INTEGER s } as OpenSSL writes it (70 to 72 bytes, usually). It is what
//            `openssl dgst -sm3 -sign key.pem -sigopt distid:1234567812345678` produces and
//            `openssl dgst -sm3 -verify pub.pem -sigopt distid:1234567812345678 -signature sig`
//            accepts. (OpenSSL 3.0 without -sigopt uses an empty identifier, not this one.)
//
// Keys: PEM only, unencrypted (vigil never asks for a passphrase). Private keys as PKCS#8
// ("PRIVATE KEY") or SEC1 ("EC PRIVATE KEY", "SM2 PRIVATE KEY"); public keys as
// SubjectPublicKeyInfo ("PUBLIC KEY"). Any other key type (RSA, ECDSA P-256, Ed448...) is refused
// at load time, so Sign and Verify never meet an unexpected key.
//
// A key's id is the lower-case hex SHA-256 of its DER SubjectPublicKeyInfo, i.e.
// `openssl pkey -in key.pem -pubout -outform DER | sha256sum`. An SM2 key's SubjectPublicKeyInfo
// always names the curve and holds the uncompressed point, so that one key has one id even in a
// file written with `-param_enc explicit` or `-conv_form compressed` (for which the command above
// prints another encoding).
//
// Every error message starts with "audit key <origin>: ", where origin is the file's path or
// the name a caller gave to FromPem().
//
// Thread safety: LogSigner and LogVerifier are immutable after construction and safe for
// concurrent use (each Sign/Verify builds its own OpenSSL context around the shared key); the
// free functions are safe for concurrent use.
#ifndef VIGIL_AUDIT_SIGNING_KEY_H_
#define VIGIL_AUDIT_SIGNING_KEY_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// OpenSSL's EVP_PKEY, declared here so that includers do not see OpenSSL's headers.
struct evp_pkey_st;

namespace vigil::audit {

// Stored in log headers: the numeric values are part of the file format.
enum class SignatureAlgorithm : uint8_t { kEd25519 = 1, kSm2 = 2 };

// "ed25519", "sm2".
std::string_view SignatureAlgorithmName(SignatureAlgorithm algorithm);
// Accepts the names above, case-insensitive. kInvalidArgument otherwise.
absl::StatusOr<SignatureAlgorithm> ParseSignatureAlgorithm(std::string_view name);

// The SM2 distinguishing identifier (user id) that every SM2 signature and verification uses.
inline constexpr std::string_view kSm2DistinguishingId = "1234567812345678";

namespace internal {
struct PkeyDeleter {
  void operator()(evp_pkey_st* pkey) const;
};
using PkeyPtr = std::unique_ptr<evp_pkey_st, PkeyDeleter>;
}  // namespace internal

// A private key that signs.
//
// Thread safety: safe for concurrent use.
class LogSigner {
 public:
  // Loads the private key in "pem" (see the file comment for the forms accepted). "origin" names
  // the key in error messages only (a path, or "config key audit.key").
  // Errors, all kInvalidArgument: not a PEM private key (a public key included), an encrypted
  // PEM, a key of another type ("audit key k.pem: not an Ed25519 or SM2 private key (found
  // RSA)").
  static absl::StatusOr<std::unique_ptr<LogSigner>> FromPem(std::string_view pem,
                                                            std::string_view origin);
  // FromPem on the file's contents, with "path" as the origin. Also kNotFound /
  // kPermissionDenied / ... (from errno) when the file cannot be read, and kInvalidArgument
  // when it is larger than 64 KiB.
  static absl::StatusOr<std::unique_ptr<LogSigner>> FromPemFile(const std::string& path);

  LogSigner(const LogSigner&) = delete;
  LogSigner& operator=(const LogSigner&) = delete;
  ~LogSigner();

  SignatureAlgorithm algorithm() const { return algorithm_; }

  // The signature of "message" (any length, empty included). Errors (kInternal) only when
  // OpenSSL fails, which a loaded key should never make it do.
  absl::StatusOr<std::string> Sign(std::string_view message) const;

  // The public key as SubjectPublicKeyInfo PEM ("-----BEGIN PUBLIC KEY-----"), what
  // `openssl pkey -in key.pem -pubout` prints.
  const std::string& PublicKeyPem() const { return public_key_pem_; }
  // Lower-case hex SHA-256 of the DER SubjectPublicKeyInfo, 64 characters.
  const std::string& key_id() const { return key_id_; }

 private:
  LogSigner(SignatureAlgorithm algorithm, internal::PkeyPtr key, std::string origin,
            std::string public_key_pem, std::string key_id);

  // Constant after construction.
  const SignatureAlgorithm algorithm_;
  const internal::PkeyPtr key_;
  const std::string origin_;
  const std::string public_key_pem_;
  const std::string key_id_;
};

// A public key that verifies.
//
// Thread safety: safe for concurrent use.
class LogVerifier {
 public:
  // Loads the SubjectPublicKeyInfo in "pem" or, for convenience, the public half of a private
  // key PEM (the private part is dropped at once). Errors as LogSigner::FromPem.
  static absl::StatusOr<std::unique_ptr<LogVerifier>> FromPem(std::string_view pem,
                                                              std::string_view origin);
  static absl::StatusOr<std::unique_ptr<LogVerifier>> FromPemFile(const std::string& path);

  LogVerifier(const LogVerifier&) = delete;
  LogVerifier& operator=(const LogVerifier&) = delete;
  ~LogVerifier();

  SignatureAlgorithm algorithm() const { return algorithm_; }
  const std::string& PublicKeyPem() const { return public_key_pem_; }
  const std::string& key_id() const { return key_id_; }

  // OK when "signature" is this key's signature of "message".
  // kInvalidArgument when the signature cannot be one of this algorithm at all: empty, an
  // Ed25519 signature that is not 64 bytes, an SM2 signature that is not exactly one DER
  // SEQUENCE { INTEGER r, INTEGER s } (what an Ed25519 signature given to an SM2 key is).
  // kDataLoss "audit key <origin>: signature does not verify with key <first 16 hex digits of
  // key_id>" when it is well-formed but wrong: another key, another message, a changed byte.
  absl::Status Verify(std::string_view message, std::string_view signature) const;

 private:
  LogVerifier(SignatureAlgorithm algorithm, internal::PkeyPtr key, std::string origin,
              std::string public_key_pem, std::string key_id);

  // Constant after construction.
  const SignatureAlgorithm algorithm_;
  const internal::PkeyPtr key_;
  const std::string origin_;
  const std::string public_key_pem_;
  const std::string key_id_;
};

// A new random private key as unencrypted PKCS#8 PEM ("-----BEGIN PRIVATE KEY-----"), for
// `vigil audit keygen`; LogSigner::FromPem loads it. kInternal only when OpenSSL fails.
absl::StatusOr<std::string> GeneratePrivateKeyPem(SignatureAlgorithm algorithm);

}  // namespace vigil::audit

#endif  // VIGIL_AUDIT_SIGNING_KEY_H_
