#include "vigil/crypto/pseudonym.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/sha.h>

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "vigil/common/check.h"

namespace vigil::crypto {

// HMAC(K, m) = H((K' ^ opad) || H((K' ^ ipad) || m)), K' the key padded to the block (or its
// hash when longer). Both padded-key blocks are hashed once, at creation; a pseudonym then
// copies the two states and hashes only the message and the inner digest, which is several
// times faster than a one-shot HMAC that sets up its context on every call.
//
// For HMAC-SHA-256 the states are also kept as plain SHA256_CTX values: copying one is a
// struct copy, where EVP_MD_CTX_copy_ex duplicates the provider's context on the heap (an
// allocation and a free per copy, two copies per pseudonym, on every payment's two accounts).
// OpenSSL 3.0 deprecates the low-level SHA-256 functions but keeps them; they are the same
// (SHA-NI where the CPU has it) implementation.
struct Pseudonymizer::Midstates {
  EVP_MD_CTX* inner = nullptr;
  EVP_MD_CTX* outer = nullptr;
  bool sha256 = false;
  SHA256_CTX sha_inner{}, sha_outer{};
  ~Midstates() {
    EVP_MD_CTX_free(inner);
    EVP_MD_CTX_free(outer);
    OPENSSL_cleanse(&sha_inner, sizeof(sha_inner));
    OPENSSL_cleanse(&sha_outer, sizeof(sha_outer));
  }
};

namespace {

const EVP_MD* Md(Pseudonymizer::Hash hash) {
  return hash == Pseudonymizer::Hash::kHmacSm3 ? EVP_sm3() : EVP_sha256();
}

// One scratch context per thread, reused.
EVP_MD_CTX* Scratch() {
  struct Holder {
    EVP_MD_CTX* ctx = EVP_MD_CTX_new();
    ~Holder() { EVP_MD_CTX_free(ctx); }
  };
  thread_local Holder holder;
  return holder.ctx;
}

}  // namespace

absl::StatusOr<Pseudonymizer> Pseudonymizer::Create(Hash hash, std::string key) {
  if (key.size() < 32) {
    const size_t got = key.size();
    OPENSSL_cleanse(key.data(), key.size());
    return absl::InvalidArgumentError(
        absl::StrCat("pseudonym key: at least 32 bytes, got ", got));
  }
  const EVP_MD* md = Md(hash);
  const size_t block = static_cast<size_t>(EVP_MD_get_block_size(md));  // 64 for both
  unsigned char padded[128] = {};
  VIGIL_CHECK(block <= sizeof(padded));
  if (key.size() > block) {
    unsigned int n = 0;
    VIGIL_CHECK(EVP_Digest(key.data(), key.size(), padded, &n, md, nullptr) == 1);
  } else {
    std::copy(key.begin(), key.end(), padded);
  }
  OPENSSL_cleanse(key.data(), key.size());
  auto m = std::make_unique<Midstates>();
  m->inner = EVP_MD_CTX_new();
  m->outer = EVP_MD_CTX_new();
  unsigned char pad[128];
  bool ok = m->inner != nullptr && m->outer != nullptr;
  for (size_t i = 0; i < block; ++i) pad[i] = padded[i] ^ 0x36;
  ok = ok && EVP_DigestInit_ex(m->inner, md, nullptr) == 1 &&
       EVP_DigestUpdate(m->inner, pad, block) == 1;
  for (size_t i = 0; i < block; ++i) pad[i] = padded[i] ^ 0x5c;
  ok = ok && EVP_DigestInit_ex(m->outer, md, nullptr) == 1 &&
       EVP_DigestUpdate(m->outer, pad, block) == 1;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  if (hash == Hash::kHmacSha256) {
    m->sha256 = true;
    for (size_t i = 0; i < block; ++i) pad[i] = padded[i] ^ 0x36;
    ok = ok && SHA256_Init(&m->sha_inner) == 1 && SHA256_Update(&m->sha_inner, pad, block) == 1;
    for (size_t i = 0; i < block; ++i) pad[i] = padded[i] ^ 0x5c;
    ok = ok && SHA256_Init(&m->sha_outer) == 1 && SHA256_Update(&m->sha_outer, pad, block) == 1;
  }
#pragma GCC diagnostic pop
  OPENSSL_cleanse(padded, sizeof(padded));
  OPENSSL_cleanse(pad, sizeof(pad));
  if (!ok) return absl::InternalError("pseudonym key: the hash could not be set up");
  return Pseudonymizer(hash, std::move(m));
}

Pseudonymizer::Pseudonymizer(Hash hash, std::unique_ptr<Midstates> m)
    : hash_(hash), m_(std::move(m)) {}
Pseudonymizer::Pseudonymizer(Pseudonymizer&& other) noexcept = default;
Pseudonymizer& Pseudonymizer::operator=(Pseudonymizer&& other) noexcept = default;
Pseudonymizer::~Pseudonymizer() = default;

void Pseudonymizer::AssignOf(std::string_view id, std::string* out) const {
  if (m_->sha256) {
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
    unsigned char inner[SHA256_DIGEST_LENGTH];
    SHA256_CTX c = m_->sha_inner;
    SHA256_Update(&c, id.data(), id.size());
    SHA256_Final(inner, &c);
    c = m_->sha_outer;
    SHA256_Update(&c, inner, sizeof(inner));
    out->resize(SHA256_DIGEST_LENGTH);
    SHA256_Final(reinterpret_cast<unsigned char*>(out->data()), &c);
#pragma GCC diagnostic pop
    return;
  }
  EVP_MD_CTX* ctx = Scratch();
  unsigned char inner[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  VIGIL_CHECK(EVP_MD_CTX_copy_ex(ctx, m_->inner) == 1);
  VIGIL_CHECK(EVP_DigestUpdate(ctx, id.data(), id.size()) == 1);
  VIGIL_CHECK(EVP_DigestFinal_ex(ctx, inner, &n) == 1);
  VIGIL_CHECK(EVP_MD_CTX_copy_ex(ctx, m_->outer) == 1);
  VIGIL_CHECK(EVP_DigestUpdate(ctx, inner, n) == 1);
  out->resize(32);
  VIGIL_CHECK(EVP_DigestFinal_ex(ctx, reinterpret_cast<unsigned char*>(out->data()), &n) == 1);
}

std::string Pseudonymizer::Of(std::string_view id) const {
  std::string out;
  AssignOf(id, &out);
  return out;
}

std::string_view Pseudonymizer::name() const {
  return hash_ == Hash::kHmacSm3 ? "hmac-sm3" : "hmac-sha256";
}

std::string Pseudonymizer::key_id() const {
  return absl::BytesToHexString(Of("vigil pseudonym key id")).substr(0, 16);
}

}  // namespace vigil::crypto
