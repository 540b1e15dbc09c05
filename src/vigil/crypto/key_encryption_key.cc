#include "vigil/crypto/key_encryption_key.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "vigil/common/private_file.h"
#include "vigil/common/sha256.h"
#include "vigil/common/string_view.h"

namespace vigil::crypto {
namespace {

struct PkeyCtxFree {
  void operator()(EVP_PKEY_CTX* c) const { EVP_PKEY_CTX_free(c); }
};
using PkeyCtx = std::unique_ptr<EVP_PKEY_CTX, PkeyCtxFree>;
struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};

const unsigned char* Bytes(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}

absl::Status Failed(std::string_view what, absl::StatusCode code = absl::StatusCode::kInternal) {
  ERR_clear_error();
  return absl::Status(code, ToAbsl(what));
}

absl::StatusOr<std::string> ReadKeyFile(const std::string& path, bool require_private) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    return absl::NotFoundError(absl::StrCat("key file '", path, "' cannot be read"));
  }
  if (require_private) {
    if (absl::Status s = CheckOwnerOnly(path, "private key file"); !s.ok()) return s;
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("key file '", path, "' cannot be read"));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

struct KeyEncryptionKey::Key {
  EVP_PKEY* pkey = nullptr;
  ~Key() { EVP_PKEY_free(pkey); }
};

std::string_view KeyWrapAlgorithmName(KeyWrapAlgorithm a) {
  return a == KeyWrapAlgorithm::kSm2 ? "sm2" : "rsa-oaep-sha256";
}

KeyEncryptionKey::KeyEncryptionKey(std::unique_ptr<Key> key, KeyWrapAlgorithm algorithm,
                                   std::string key_id, bool has_private)
    : key_(std::move(key)),
      algorithm_(algorithm),
      key_id_(std::move(key_id)),
      has_private_(has_private) {}
KeyEncryptionKey::KeyEncryptionKey(KeyEncryptionKey&&) noexcept = default;
KeyEncryptionKey& KeyEncryptionKey::operator=(KeyEncryptionKey&&) noexcept = default;
KeyEncryptionKey::~KeyEncryptionKey() = default;

absl::StatusOr<KeyEncryptionKey> KeyEncryptionKey::FromKey(std::unique_ptr<Key> key,
                                                           bool has_private) {
  KeyWrapAlgorithm algorithm;
  if (EVP_PKEY_is_a(key->pkey, "SM2")) {
    algorithm = KeyWrapAlgorithm::kSm2;
  } else if (EVP_PKEY_is_a(key->pkey, "RSA")) {
    if (EVP_PKEY_get_bits(key->pkey) < 2048) {
      return absl::InvalidArgumentError(absl::StrCat(
          "key-encryption key: RSA keys must have at least 2048 bits, this one has ",
          EVP_PKEY_get_bits(key->pkey)));
    }
    algorithm = KeyWrapAlgorithm::kRsaOaepSha256;
  } else {
    return absl::InvalidArgumentError(
        "key-encryption key: not an RSA or SM2 key (EC keys on other curves cannot wrap)");
  }
  unsigned char* der = nullptr;
  const int n = i2d_PUBKEY(key->pkey, &der);
  if (n <= 0) return Failed("key-encryption key: cannot encode the public key");
  const std::string digest = Sha256Hex(std::string_view(reinterpret_cast<char*>(der), n));
  OPENSSL_free(der);
  return KeyEncryptionKey(std::move(key), algorithm, digest.substr(0, 16), has_private);
}

absl::StatusOr<KeyEncryptionKey> KeyEncryptionKey::FromPrivateKeyPem(std::string_view pem) {
  std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  auto key = std::make_unique<Key>();
  key->pkey = bio ? PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr) : nullptr;
  if (key->pkey == nullptr) {
    return Failed("key-encryption key: not a PEM private key", absl::StatusCode::kInvalidArgument);
  }
  return FromKey(std::move(key), true);
}

absl::StatusOr<KeyEncryptionKey> KeyEncryptionKey::FromPublicKeyPem(std::string_view pem) {
  // A writer that is handed the private half would hold a key that opens everything it wrote.
  if (pem.find("PRIVATE KEY-----") != std::string_view::npos) {
    return absl::InvalidArgumentError(
        "key-encryption key: this is a private key; only the public half is wanted here (make "
        "it with `openssl pkey -in KEY -pubout -out KEY.pub`)");
  }
  std::unique_ptr<BIO, BioFree> bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  auto key = std::make_unique<Key>();
  key->pkey = bio ? PEM_read_bio_PUBKEY(bio.get(), nullptr, nullptr, nullptr) : nullptr;
  if (key->pkey == nullptr) {
    return Failed("key-encryption key: not a PEM public key", absl::StatusCode::kInvalidArgument);
  }
  return FromKey(std::move(key), false);
}

absl::StatusOr<KeyEncryptionKey> KeyEncryptionKey::LoadPrivateKeyFile(const std::string& path) {
  absl::StatusOr<std::string> pem = ReadKeyFile(path, true);
  if (!pem.ok()) return pem.status();
  absl::StatusOr<KeyEncryptionKey> key = FromPrivateKeyPem(*pem);
  OPENSSL_cleanse(pem->data(), pem->size());
  if (!key.ok()) {
    return absl::Status(key.status().code(),
                        absl::StrCat("'", path, "': ", key.status().message()));
  }
  return key;
}

absl::StatusOr<KeyEncryptionKey> KeyEncryptionKey::LoadPublicKeyFile(const std::string& path) {
  absl::StatusOr<std::string> pem = ReadKeyFile(path, false);
  if (!pem.ok()) return pem.status();
  absl::StatusOr<KeyEncryptionKey> key = FromPublicKeyPem(*pem);
  OPENSSL_cleanse(pem->data(), pem->size());  // in case it was a private key after all
  if (!key.ok()) {
    return absl::Status(key.status().code(),
                        absl::StrCat("'", path, "': ", key.status().message()));
  }
  return key;
}

KeyEncryptionKey KeyEncryptionKey::WithUnwrapHook(KeyEncryptionKey public_key, UnwrapHook hook) {
  if (hook != nullptr) public_key.unwrap_hook_ = std::move(hook);
  return public_key;
}

namespace {

// RSA keys get OAEP with SHA-256 for both the label hash and MGF1; SM2 keys their default
// (SM3).
bool SetPadding(EVP_PKEY_CTX* ctx, KeyWrapAlgorithm algorithm) {
  if (algorithm != KeyWrapAlgorithm::kRsaOaepSha256) return true;
  return EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_OAEP_PADDING) == 1 &&
         EVP_PKEY_CTX_set_rsa_oaep_md(ctx, EVP_sha256()) == 1 &&
         EVP_PKEY_CTX_set_rsa_mgf1_md(ctx, EVP_sha256()) == 1;
}

}  // namespace

absl::StatusOr<std::string> KeyEncryptionKey::Wrap(std::string_view data_key) const {
  PkeyCtx ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, key_->pkey, nullptr));
  size_t n = 0;
  if (ctx == nullptr || EVP_PKEY_encrypt_init(ctx.get()) != 1 ||
      !SetPadding(ctx.get(), algorithm_) ||
      EVP_PKEY_encrypt(ctx.get(), nullptr, &n, Bytes(data_key), data_key.size()) != 1) {
    return Failed(absl::StrCat("key wrap (", ToAbsl(KeyWrapAlgorithmName(algorithm_)), ") failed"));
  }
  std::string out(n, '\0');
  if (EVP_PKEY_encrypt(ctx.get(), reinterpret_cast<unsigned char*>(out.data()), &n,
                       Bytes(data_key), data_key.size()) != 1) {
    return Failed(absl::StrCat("key wrap (", ToAbsl(KeyWrapAlgorithmName(algorithm_)), ") failed"));
  }
  out.resize(n);
  return out;
}

absl::StatusOr<std::string> KeyEncryptionKey::Unwrap(std::string_view wrapped) const {
  if (unwrap_hook_ != nullptr) {
    absl::StatusOr<std::string> key = unwrap_hook_(wrapped);
    if (!key.ok()) {
      return absl::Status(key.status().code(), absl::StrCat("key-management hook for key ", key_id_,
                                                            ": ", key.status().message()));
    }
    return key;
  }
  if (!has_private_) {
    return absl::FailedPreconditionError(absl::StrCat(
        "key ", key_id_, " is a public key: unwrapping needs its private key"));
  }
  PkeyCtx ctx(EVP_PKEY_CTX_new_from_pkey(nullptr, key_->pkey, nullptr));
  size_t n = 0;
  if (ctx == nullptr || EVP_PKEY_decrypt_init(ctx.get()) != 1 ||
      !SetPadding(ctx.get(), algorithm_) ||
      EVP_PKEY_decrypt(ctx.get(), nullptr, &n, Bytes(wrapped), wrapped.size()) != 1) {
    return Failed(absl::StrCat("wrapped key does not decrypt under key ", key_id_),
                  absl::StatusCode::kDataLoss);
  }
  std::string out(n, '\0');
  if (EVP_PKEY_decrypt(ctx.get(), reinterpret_cast<unsigned char*>(out.data()), &n,
                       Bytes(wrapped), wrapped.size()) != 1) {
    OPENSSL_cleanse(out.data(), out.size());
    return Failed(absl::StrCat("wrapped key does not decrypt under key ", key_id_),
                  absl::StatusCode::kDataLoss);
  }
  out.resize(n);
  return out;
}

}  // namespace vigil::crypto
