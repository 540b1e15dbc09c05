#include "vigil/crypto/pem_private_key.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <utility>

#include "absl/strings/match.h"
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

std::string TakeOpenSslReasons() {
  std::string reasons;
  std::string last;
  while (const unsigned long code = ERR_get_error()) {
    const char* reason = ERR_reason_error_string(code);
    std::string text = reason != nullptr ? reason : absl::StrCat("error code ", code);
    if (text == last) continue;
    absl::StrAppend(&reasons, reasons.empty() ? "" : "; ", text);
    last = std::move(text);
  }
  return reasons.empty() ? "no reason given by OpenSSL" : reasons;
}

void EvpPkeyFree::operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }

bool LooksLikeEncryptedPem(std::string_view pem) {
  return absl::StrContains(ToAbsl(pem), "-----BEGIN ENCRYPTED PRIVATE KEY-----") ||
         absl::StrContains(ToAbsl(pem), "Proc-Type: 4,ENCRYPTED");
}

namespace {

// OpenSSL calls this only for an encrypted PEM. It records that and fails: a NULL callback
// would make OpenSSL prompt on the terminal.
int RefusePassphrase(char* /*buf*/, int /*size*/, int /*rwflag*/, void* asked) {
  *static_cast<bool*>(asked) = true;
  return -1;
}

}  // namespace

PemPrivateKey ReadPrivateKeyPem(std::string_view pem) {
  PemPrivateKey read;
  if (LooksLikeEncryptedPem(pem)) {
    read.failure = PemPrivateKey::Failure::kEncrypted;
    return read;
  }
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  if (bio == nullptr) {
    read.failure = PemPrivateKey::Failure::kNoMemory;
    read.reasons = TakeOpenSslReasons();
    return read;
  }
  bool asked = false;
  read.key.reset(PEM_read_bio_PrivateKey(bio, nullptr, RefusePassphrase, &asked));
  BIO_free(bio);
  if (asked) {
    read.key.reset();
    ERR_clear_error();
    read.failure = PemPrivateKey::Failure::kEncrypted;
  } else if (read.key == nullptr) {
    read.failure = PemPrivateKey::Failure::kNoKey;
    read.reasons = TakeOpenSslReasons();
  } else {
    ERR_clear_error();  // The decoders OpenSSL tried before the right one leave their errors.
  }
  return read;
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
