// Reading PEM private keys from text: a key, an encrypted key (refused without a prompt) and
// text that holds none; and OpenSSL's error queue as one line of reasons.
#include "vigil/crypto/pem_private_key.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <string>

#include "gtest/gtest.h"

namespace vigil::crypto {
namespace {

// "key" as PEM: unencrypted PKCS#8, or encrypted under a passphrase when "passphrase" is given.
std::string PemOf(EVP_PKEY* key, const char* passphrase = nullptr) {
  BIO* bio = BIO_new(BIO_s_mem());
  const int ok = passphrase == nullptr
                     ? PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr)
                     : PEM_write_bio_PKCS8PrivateKey(
                           bio, key, EVP_aes_256_cbc(), passphrase,
                           static_cast<int>(std::string(passphrase).size()), nullptr, nullptr);
  EXPECT_EQ(ok, 1);
  char* data = nullptr;
  const long length = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<size_t>(length));
  BIO_free(bio);
  return pem;
}

EvpPkeyPtr NewEd25519Key() { return EvpPkeyPtr(EVP_PKEY_Q_keygen(nullptr, nullptr, "ED25519")); }

TEST(ReadPrivateKeyPem, ReadsAnUnencryptedKey) {
  const EvpPkeyPtr key = NewEd25519Key();
  ASSERT_NE(key, nullptr);
  const PemPrivateKey read = ReadPrivateKeyPem(PemOf(key.get()));
  EXPECT_EQ(read.failure, PemPrivateKey::Failure::kNone);
  ASSERT_NE(read.key, nullptr);
  EXPECT_EQ(EVP_PKEY_eq(read.key.get(), key.get()), 1);
  EXPECT_EQ(ERR_peek_error(), 0u);  // the decoders tried first left nothing behind
}

TEST(ReadPrivateKeyPem, RefusesAnEncryptedKey) {
  const EvpPkeyPtr key = NewEd25519Key();
  ASSERT_NE(key, nullptr);
  const std::string pem = PemOf(key.get(), "secret");
  EXPECT_TRUE(LooksLikeEncryptedPem(pem));
  const PemPrivateKey read = ReadPrivateKeyPem(pem);
  EXPECT_EQ(read.failure, PemPrivateKey::Failure::kEncrypted);
  EXPECT_EQ(read.key, nullptr);
  EXPECT_EQ(ERR_peek_error(), 0u);
}

TEST(ReadPrivateKeyPem, RecognizesBothEncryptedArmours) {
  EXPECT_TRUE(LooksLikeEncryptedPem("-----BEGIN ENCRYPTED PRIVATE KEY-----\n..."));
  EXPECT_TRUE(LooksLikeEncryptedPem(
      "-----BEGIN EC PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-256-CBC,00\n"));
  EXPECT_FALSE(LooksLikeEncryptedPem("-----BEGIN PRIVATE KEY-----\n..."));
}

TEST(ReadPrivateKeyPem, SaysWhyTextHoldsNoKey) {
  for (const std::string text : {"", "not a key", "-----BEGIN PRIVATE KEY-----\n!!\n"}) {
    SCOPED_TRACE(text);
    const PemPrivateKey read = ReadPrivateKeyPem(text);
    EXPECT_EQ(read.failure, PemPrivateKey::Failure::kNoKey);
    EXPECT_EQ(read.key, nullptr);
    EXPECT_FALSE(read.reasons.empty());
    EXPECT_EQ(ERR_peek_error(), 0u);
  }
}

TEST(TakeOpenSslReasons, JoinsReasonsOldestFirstWithoutRepeats) {
  ERR_clear_error();
  EXPECT_EQ(TakeOpenSslReasons(), "no reason given by OpenSSL");
  ERR_raise(ERR_LIB_PEM, PEM_R_NO_START_LINE);
  ERR_raise(ERR_LIB_PEM, PEM_R_NO_START_LINE);
  ERR_raise(ERR_LIB_PEM, PEM_R_BAD_END_LINE);
  EXPECT_EQ(TakeOpenSslReasons(), "no start line; bad end line");
  EXPECT_EQ(ERR_peek_error(), 0u);
}

}  // namespace
}  // namespace vigil::crypto
