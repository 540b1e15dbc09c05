#include "vigil/crypto/primitives.h"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "vigil/common/string_view.h"

namespace vigil::crypto {
namespace {

struct CipherCtxFree {
  void operator()(EVP_CIPHER_CTX* c) const { EVP_CIPHER_CTX_free(c); }
};
using CipherCtx = std::unique_ptr<EVP_CIPHER_CTX, CipherCtxFree>;

const unsigned char* Bytes(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}
unsigned char* Bytes(std::string& s) { return reinterpret_cast<unsigned char*>(s.data()); }

// OpenSSL's error queue is per thread: drained so that a failure here cannot be reported by
// an unrelated call later.
absl::Status OpensslError(std::string_view what) {
  ERR_clear_error();
  return absl::InternalError(absl::StrCat(ToAbsl(what), ": OpenSSL failed"));
}

absl::Status CheckLength(std::string_view what, std::string_view name, std::string_view value,
                         size_t expected) {
  if (value.size() == expected) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(ToAbsl(what), ": the ", ToAbsl(name),
                                                 " must be ", expected, " bytes, got ",
                                                 value.size()));
}

int Int(size_t n) { return static_cast<int>(n); }

// One pass of a stream or block mode without padding.
absl::StatusOr<std::string> Crypt(std::string_view what, const EVP_CIPHER* cipher,
                                  std::string_view key, std::string_view iv,
                                  std::string_view data) {
  CipherCtx ctx(EVP_CIPHER_CTX_new());
  if (ctx == nullptr || cipher == nullptr ||
      EVP_EncryptInit_ex(ctx.get(), cipher, nullptr, Bytes(key),
                         iv.empty() ? nullptr : Bytes(iv)) != 1 ||
      EVP_CIPHER_CTX_set_padding(ctx.get(), 0) != 1) {
    return OpensslError(what);
  }
  std::string out(data.size() + kSm4BlockBytes, '\0');
  int written = 0, last = 0;
  if (EVP_EncryptUpdate(ctx.get(), Bytes(out), &written, Bytes(data), Int(data.size())) != 1 ||
      EVP_EncryptFinal_ex(ctx.get(), Bytes(out) + written, &last) != 1) {
    return OpensslError(what);
  }
  out.resize(static_cast<size_t>(written + last));
  return out;
}

}  // namespace

std::string Sm3(std::string_view data) {
  std::string out(kSm3Bytes, '\0');
  unsigned int n = 0;
  // SM3 is built into OpenSSL 3's default provider; a failure here is a broken installation.
  if (EVP_Digest(data.data(), data.size(), Bytes(out), &n, EVP_sm3(), nullptr) != 1) {
    ERR_clear_error();
    out.clear();
  }
  return out;
}

std::string HmacSm3(std::string_view key, std::string_view data) {
  std::string out(kSm3Bytes, '\0');
  unsigned int n = 0;
  if (HMAC(EVP_sm3(), key.data(), Int(key.size()), Bytes(data), data.size(), Bytes(out), &n) ==
      nullptr) {
    ERR_clear_error();
    out.clear();
  }
  return out;
}

absl::StatusOr<std::string> Sm4EncryptBlock(std::string_view key, std::string_view block) {
  if (absl::Status s = CheckLength("SM4", "key", key, kSm4KeyBytes); !s.ok()) return s;
  if (absl::Status s = CheckLength("SM4", "block", block, kSm4BlockBytes); !s.ok()) return s;
  return Crypt("SM4", EVP_sm4_ecb(), key, {}, block);
}

absl::StatusOr<std::string> Sm4Ctr(std::string_view key, std::string_view iv, std::string_view data) {
  if (absl::Status s = CheckLength("SM4-CTR", "key", key, kSm4KeyBytes); !s.ok()) return s;
  if (absl::Status s = CheckLength("SM4-CTR", "counter", iv, kSm4BlockBytes); !s.ok()) return s;
  return Crypt("SM4-CTR", EVP_sm4_ctr(), key, iv, data);
}

absl::StatusOr<std::string> Aes256GcmSeal(std::string_view key, std::string_view nonce,
                                          std::string_view aad, std::string_view plaintext) {
  if (absl::Status s = CheckLength("AES-256-GCM", "key", key, kAes256KeyBytes); !s.ok()) return s;
  if (absl::Status s = CheckLength("AES-256-GCM", "nonce", nonce, kGcmNonceBytes); !s.ok()) {
    return s;
  }
  CipherCtx ctx(EVP_CIPHER_CTX_new());
  std::string out(plaintext.size() + kGcmTagBytes, '\0');
  int written = 0, last = 0, ignored = 0;
  if (ctx == nullptr ||
      EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, Bytes(key), Bytes(nonce)) != 1 ||
      (!aad.empty() &&
       EVP_EncryptUpdate(ctx.get(), nullptr, &ignored, Bytes(aad), Int(aad.size())) != 1) ||
      EVP_EncryptUpdate(ctx.get(), Bytes(out), &written, Bytes(plaintext),
                        Int(plaintext.size())) != 1 ||
      EVP_EncryptFinal_ex(ctx.get(), Bytes(out) + written, &last) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, Int(kGcmTagBytes),
                          Bytes(out) + written + last) != 1) {
    return OpensslError("AES-256-GCM");
  }
  return out;
}

absl::StatusOr<std::string> Aes256GcmOpen(std::string_view key, std::string_view nonce,
                                          std::string_view aad, std::string_view sealed) {
  if (absl::Status s = CheckLength("AES-256-GCM", "key", key, kAes256KeyBytes); !s.ok()) return s;
  if (absl::Status s = CheckLength("AES-256-GCM", "nonce", nonce, kGcmNonceBytes); !s.ok()) {
    return s;
  }
  if (sealed.size() < kGcmTagBytes) {
    return absl::DataLossError("AES-256-GCM: the sealed value is shorter than its tag");
  }
  const std::string_view ciphertext = sealed.substr(0, sealed.size() - kGcmTagBytes);
  std::string tag(sealed.substr(ciphertext.size()));
  CipherCtx ctx(EVP_CIPHER_CTX_new());
  std::string out(ciphertext.size() + kGcmTagBytes, '\0');
  int written = 0, last = 0, ignored = 0;
  if (ctx == nullptr ||
      EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, Bytes(key), Bytes(nonce)) != 1 ||
      (!aad.empty() &&
       EVP_DecryptUpdate(ctx.get(), nullptr, &ignored, Bytes(aad), Int(aad.size())) != 1) ||
      EVP_DecryptUpdate(ctx.get(), Bytes(out), &written, Bytes(ciphertext),
                        Int(ciphertext.size())) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, Int(kGcmTagBytes), Bytes(tag)) != 1) {
    return OpensslError("AES-256-GCM");
  }
  if (EVP_DecryptFinal_ex(ctx.get(), Bytes(out) + written, &last) != 1) {
    ERR_clear_error();
    return absl::DataLossError(
        "AES-256-GCM: authentication failed (wrong key or associated data, or altered bytes)");
  }
  out.resize(static_cast<size_t>(written + last));
  return out;
}

absl::StatusOr<std::string> RandomBytes(size_t n) {
  std::string out(n, '\0');
  if (n > 0 && RAND_bytes(Bytes(out), Int(n)) != 1) return OpensslError("random bytes");
  return out;
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace vigil::crypto
