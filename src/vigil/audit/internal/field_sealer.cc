#include "vigil/audit/internal/field_sealer.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <openssl/rand.h>
#include <pthread.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "vigil/common/string_view.h"
#include "vigil/crypto/primitives.h"

namespace vigil::audit::internal {
namespace {

constexpr size_t kSm4MacKeyBytes = 32;
constexpr size_t kRandomBufferBytes = 4096;

// Bumped in a child process after fork(): a nonce buffer filled before it is not used after.
std::atomic<uint64_t> fork_generation{0};
void CountFork() { fork_generation.fetch_add(1, std::memory_order_relaxed); }
uint64_t ForkGeneration() {
  static std::once_flag registered;
  std::call_once(registered, [] { pthread_atfork(nullptr, nullptr, CountFork); });
  return fork_generation.load(std::memory_order_relaxed);
}

size_t NonceBytes(crypto::CipherSuite suite) {
  return suite == crypto::CipherSuite::kAes256Gcm ? crypto::kGcmNonceBytes
                                                  : crypto::kSm4BlockBytes;
}
size_t TagBytes(crypto::CipherSuite suite) {
  return suite == crypto::CipherSuite::kAes256Gcm ? crypto::kGcmTagBytes : crypto::kSm3Bytes;
}

const unsigned char* Bytes(std::string_view s) {
  return reinterpret_cast<const unsigned char*>(s.data());
}
unsigned char* Bytes(std::string& s, size_t at) {
  return reinterpret_cast<unsigned char*>(s.data()) + at;
}

absl::Status OpensslFailed(std::string_view what) {
  return absl::InternalError(absl::StrCat("sealing a field: OpenSSL failed to ", ToAbsl(what)));
}

}  // namespace

// The fetched algorithms, shared by the contexts.
struct FieldSealer::Algorithms {
  EVP_CIPHER* cipher = nullptr;  // AES-256-GCM or SM4-CTR
  EVP_MAC* mac = nullptr;        // HMAC (SM4 only)
  ~Algorithms() {
    EVP_MAC_free(mac);
    EVP_CIPHER_free(cipher);
  }
};

// One caller's keyed contexts and nonce buffer.
struct FieldSealer::Context {
  EVP_CIPHER_CTX* cipher = nullptr;
  EVP_MAC_CTX* mac = nullptr;
  std::array<unsigned char, kRandomBufferBytes> random{};
  size_t random_used = kRandomBufferBytes;
  uint64_t generation = 0;

  ~Context() {
    EVP_MAC_CTX_free(mac);
    EVP_CIPHER_CTX_free(cipher);  // cleanses the key schedule
    OPENSSL_cleanse(random.data(), random.size());
  }
  // "n" fresh random bytes.
  bool Random(size_t n, unsigned char* out) {
    const uint64_t now = ForkGeneration();
    if (random_used + n > random.size() || generation != now) {
      if (RAND_bytes(random.data(), static_cast<int>(random.size())) != 1) return false;
      random_used = 0;
      generation = now;
    }
    std::memcpy(out, random.data() + random_used, n);
    OPENSSL_cleanse(random.data() + random_used, n);
    random_used += n;
    return true;
  }
};

absl::StatusOr<std::unique_ptr<FieldSealer>> FieldSealer::Create(crypto::CipherSuite suite,
                                                                 std::string_view key) {
  if (key.size() != crypto::DataKeyBytes(suite)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "a ", ToAbsl(crypto::CipherSuiteName(suite)), " data key is ", crypto::DataKeyBytes(suite),
        " bytes, got ", key.size()));
  }
  auto algorithms = std::make_unique<Algorithms>();
  const bool aes = suite == crypto::CipherSuite::kAes256Gcm;
  algorithms->cipher = EVP_CIPHER_fetch(nullptr, aes ? "AES-256-GCM" : "SM4-CTR", nullptr);
  if (algorithms->cipher == nullptr) return OpensslFailed("fetch the cipher");
  if (!aes) {
    algorithms->mac = EVP_MAC_fetch(nullptr, "HMAC", nullptr);
    if (algorithms->mac == nullptr) return OpensslFailed("fetch HMAC");
  }
  std::unique_ptr<FieldSealer> sealer(
      new FieldSealer(suite, std::string(key), std::move(algorithms)));
  // One context now: a key OpenSSL refuses fails here, not at the first record.
  absl::StatusOr<std::unique_ptr<Context>> context = sealer->NewContext();
  if (!context.ok()) return context.status();
  sealer->Give(*std::move(context));
  return sealer;
}

FieldSealer::FieldSealer(crypto::CipherSuite suite, std::string key,
                         std::unique_ptr<Algorithms> algorithms)
    : suite_(suite), key_(std::move(key)), algorithms_(std::move(algorithms)) {}

FieldSealer::~FieldSealer() {
  {
    absl::MutexLock lock(&mu_);
    free_.clear();
  }
  OPENSSL_cleanse(key_.data(), key_.size());
}

absl::StatusOr<std::unique_ptr<FieldSealer::Context>> FieldSealer::NewContext() const {
  auto context = std::make_unique<Context>();
  context->cipher = EVP_CIPHER_CTX_new();
  const bool aes = suite_ == crypto::CipherSuite::kAes256Gcm;
  if (context->cipher == nullptr ||
      EVP_EncryptInit_ex2(context->cipher, algorithms_->cipher, Bytes(key_), nullptr, nullptr) !=
          1) {
    return OpensslFailed("set the cipher's key");
  }
  if (!aes) {
    context->mac = EVP_MAC_CTX_new(algorithms_->mac);
    char digest[] = "SM3";
    const OSSL_PARAM params[] = {
        OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
        OSSL_PARAM_construct_end()};
    const std::string_view mac_key = std::string_view(key_).substr(crypto::kSm4KeyBytes);
    if (context->mac == nullptr ||
        EVP_MAC_init(context->mac, Bytes(mac_key), kSm4MacKeyBytes, params) != 1) {
      return OpensslFailed("set the HMAC-SM3 key");
    }
  }
  return context;
}

absl::StatusOr<std::unique_ptr<FieldSealer::Context>> FieldSealer::Take() const {
  {
    absl::MutexLock lock(&mu_);
    if (!free_.empty()) {
      std::unique_ptr<Context> context = std::move(free_.back());
      free_.pop_back();
      return context;
    }
  }
  return NewContext();
}

void FieldSealer::Give(std::unique_ptr<Context> context) const {
  absl::MutexLock lock(&mu_);
  free_.push_back(std::move(context));
}

absl::StatusOr<std::string> FieldSealer::Seal(std::string_view plaintext,
                                              std::string_view aad) const {
  absl::StatusOr<std::unique_ptr<Context>> taken = Take();
  if (!taken.ok()) return taken.status();
  Context& c = **taken;
  const size_t nonce_bytes = NonceBytes(suite_), tag_bytes = TagBytes(suite_);
  // suite || nonce || ciphertext || tag (field_cipher.h).
  std::string sealed(1 + nonce_bytes + plaintext.size() + tag_bytes, '\0');
  sealed[0] = static_cast<char>(suite_);
  unsigned char* nonce = Bytes(sealed, 1);
  unsigned char* ciphertext = Bytes(sealed, 1 + nonce_bytes);
  unsigned char* tag = Bytes(sealed, 1 + nonce_bytes + plaintext.size());
  if (!c.Random(nonce_bytes, nonce)) return OpensslFailed("draw random bytes");
  // A failure leaves the context in an unknown state: it is dropped, not given back.
  int written = 0, last = 0;
  if (EVP_EncryptInit_ex2(c.cipher, nullptr, nullptr, nonce, nullptr) != 1) {
    return OpensslFailed("set the nonce");
  }
  if (suite_ == crypto::CipherSuite::kAes256Gcm) {
    if ((!aad.empty() && EVP_EncryptUpdate(c.cipher, nullptr, &written, Bytes(aad),
                                           static_cast<int>(aad.size())) != 1) ||
        EVP_EncryptUpdate(c.cipher, ciphertext, &written, Bytes(plaintext),
                          static_cast<int>(plaintext.size())) != 1 ||
        EVP_EncryptFinal_ex(c.cipher, ciphertext + written, &last) != 1 ||
        EVP_CIPHER_CTX_ctrl(c.cipher, EVP_CTRL_GCM_GET_TAG, static_cast<int>(tag_bytes), tag) !=
            1) {
      return OpensslFailed("encrypt (AES-256-GCM)");
    }
  } else {
    // Encrypt-then-MAC: HMAC-SM3 over suite || counter || len(aad) (8 bytes, big-endian) ||
    // aad || ciphertext; the keyed HMAC context is re-initialized with its key kept.
    unsigned char length[8];
    for (int i = 0; i < 8; ++i) {
      length[i] = static_cast<unsigned char>(static_cast<uint64_t>(aad.size()) >> (56 - 8 * i));
    }
    size_t mac_bytes = 0;
    if (EVP_EncryptUpdate(c.cipher, ciphertext, &written, Bytes(plaintext),
                          static_cast<int>(plaintext.size())) != 1 ||
        EVP_EncryptFinal_ex(c.cipher, ciphertext + written, &last) != 1 ||
        EVP_MAC_init(c.mac, nullptr, 0, nullptr) != 1 ||
        EVP_MAC_update(c.mac, Bytes(sealed, 0), 1 + nonce_bytes) != 1 ||
        EVP_MAC_update(c.mac, length, sizeof(length)) != 1 ||
        EVP_MAC_update(c.mac, Bytes(aad), aad.size()) != 1 ||
        EVP_MAC_update(c.mac, ciphertext, plaintext.size()) != 1 ||
        EVP_MAC_final(c.mac, tag, &mac_bytes, tag_bytes) != 1 || mac_bytes != tag_bytes) {
      return OpensslFailed("encrypt (SM4-CTR + HMAC-SM3)");
    }
  }
  Give(*std::move(taken));
  return sealed;
}

}  // namespace vigil::audit::internal
