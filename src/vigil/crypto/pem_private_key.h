// Reading an unencrypted PEM private key for TLS (the server's key, the load generator's
// client key), and OpenSSL's error queue as a reason a user can act on.
//
// Thread safety: free functions; the error queue is OpenSSL's, per thread.
#ifndef VIGIL_CRYPTO_PEM_PRIVATE_KEY_H_
#define VIGIL_CRYPTO_PEM_PRIVATE_KEY_H_

#include <openssl/types.h>

#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace vigil::crypto {

// The reason of the oldest error on this thread's OpenSSL error queue ("unknown OpenSSL error"
// when it is empty); the queue is cleared.
std::string TakeOpenSslReason();

// The private key in the PEM file "path"; the caller owns it (EVP_PKEY_free). An encrypted key
// is refused instead of prompting for a passphrase. Errors (kInvalidArgument) name "what"
// ("TLS key file", "tls.key_file"), the path and the reason, never key material.
absl::StatusOr<EVP_PKEY*> ReadUnencryptedPrivateKey(const std::string& path, std::string_view what);

}  // namespace vigil::crypto

#endif  // VIGIL_CRYPTO_PEM_PRIVATE_KEY_H_
