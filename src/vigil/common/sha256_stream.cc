#include "vigil/common/sha256_stream.h"

#include <openssl/evp.h>

#include <array>
#include <cstdint>

#include "vigil/common/check.h"
#include "vigil/common/sha256.h"

namespace vigil {
namespace {

EVP_MD_CTX* Context(void* p) { return static_cast<EVP_MD_CTX*>(p); }

}  // namespace

Sha256Stream::Sha256Stream() : context_(EVP_MD_CTX_new()) {
  // Fails only when OpenSSL itself is broken (no memory, no SHA-256 provider).
  VIGIL_CHECK(context_ != nullptr &&
              EVP_DigestInit_ex(Context(context_), EVP_sha256(), nullptr) == 1);
}

Sha256Stream::~Sha256Stream() { EVP_MD_CTX_free(Context(context_)); }

void Sha256Stream::Update(std::string_view bytes) {
  VIGIL_CHECK(EVP_DigestUpdate(Context(context_), bytes.data(), bytes.size()) == 1);
}

std::string Sha256Stream::FinishHex() {
  std::array<uint8_t, 32> digest{};
  unsigned int length = 0;
  VIGIL_CHECK(EVP_DigestFinal_ex(Context(context_), digest.data(), &length) == 1 &&
              length == digest.size());
  return DigestHex(digest);
}

}  // namespace vigil
