#include "vigil/crypto/pem_private_key.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>

#include "absl/strings/str_cat.h"
#include "vigil/common/string_view.h"

namespace vigil::crypto {

std::string TakeOpenSslReason() {
  const unsigned long e = ERR_peek_error();
  std::string out;
  if (e == 0) {
    out = "unknown OpenSSL error";
  } else if (const char* reason = ERR_reason_error_string(e); reason != nullptr) {
    out = reason;
  } else {
    char text[256];
    ERR_error_string_n(e, text, sizeof(text));
    out = text;
  }
  ERR_clear_error();
  return out;
}

absl::StatusOr<EVP_PKEY*> ReadUnencryptedPrivateKey(const std::string& path,
                                                    std::string_view what) {
  BIO* bio = BIO_new_file(path.c_str(), "r");
  if (bio == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(ToAbsl(what), " '", path, "' cannot be opened: ", TakeOpenSslReason()));
  }
  bool encrypted = false;  // OpenSSL asked for a passphrase
  const auto no_passphrase = [](char*, int, int, void* asked) -> int {
    *static_cast<bool*>(asked) = true;
    return -1;
  };
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio, nullptr, no_passphrase, &encrypted);
  BIO_free(bio);
  if (key == nullptr && encrypted) {
    ERR_clear_error();
    return absl::InvalidArgumentError(absl::StrCat(
        ToAbsl(what), " '", path,
        "' holds an encrypted private key: passphrases are not supported, it must be unencrypted"));
  }
  if (key == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        ToAbsl(what), " '", path, "' holds no usable PEM private key: ", TakeOpenSslReason()));
  }
  return key;
}

}  // namespace vigil::crypto
