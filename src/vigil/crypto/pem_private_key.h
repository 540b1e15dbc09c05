// Reading an unencrypted PEM private key, from a file for TLS (the server's key, the load
// generator's client key) or from PEM text (the audit log's signing key), and OpenSSL's error
// queue as a reason a user can act on. No reader ever prompts for a passphrase.
//
// Thread safety: free functions; the error queue is OpenSSL's, per thread.
#ifndef VIGIL_CRYPTO_PEM_PRIVATE_KEY_H_
#define VIGIL_CRYPTO_PEM_PRIVATE_KEY_H_

#include <openssl/types.h>

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace vigil::crypto {

// The reason of the oldest error on this thread's OpenSSL error queue ("unknown OpenSSL error"
// when it is empty); the queue is cleared.
std::string TakeOpenSslReason();

// Every reason on this thread's OpenSSL error queue, oldest first, without repeats, joined with
// "; " ("no reason given by OpenSSL" when it is empty); the queue is cleared.
std::string TakeOpenSslReasons();

struct EvpPkeyFree {
  void operator()(EVP_PKEY* key) const;
};
using EvpPkeyPtr = std::unique_ptr<EVP_PKEY, EvpPkeyFree>;

// Whether the armour of "pem" says it holds an encrypted private key: a PKCS#8 "ENCRYPTED
// PRIVATE KEY" block, or a traditional one with "Proc-Type: 4,ENCRYPTED".
bool LooksLikeEncryptedPem(std::string_view pem);

// What ReadPrivateKeyPem found. The caller words the error: the reader knows no origin.
struct PemPrivateKey {
  enum class Failure {
    kNone,       // "key" holds the key
    kEncrypted,  // the PEM is encrypted (by its armour, or OpenSSL asked for a passphrase)
    kNoKey,      // no PEM private key decodes; "reasons" says why
    kNoMemory,   // OpenSSL could not make a memory BIO; "reasons" says why
  };
  EvpPkeyPtr key;  // null unless kNone
  Failure failure = Failure::kNone;
  std::string reasons;  // kNoKey, kNoMemory: TakeOpenSslReasons()
};

// The first private key in the PEM text "pem" (PKCS#8, or a traditional RSA, EC or SM2 block).
// An encrypted key is refused without prompting. Leaves this thread's OpenSSL error queue
// empty.
PemPrivateKey ReadPrivateKeyPem(std::string_view pem);

// The private key in the PEM file "path"; the caller owns it (EVP_PKEY_free). An encrypted key
// is refused instead of prompting for a passphrase. Errors (kInvalidArgument) name "what"
// ("TLS key file", "tls.key_file"), the path and the reason, never key material.
absl::StatusOr<EVP_PKEY*> ReadUnencryptedPrivateKey(const std::string& path, std::string_view what);

}  // namespace vigil::crypto

#endif  // VIGIL_CRYPTO_PEM_PRIVATE_KEY_H_
