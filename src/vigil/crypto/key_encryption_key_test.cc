// Key wrapping against independent implementations: the SM2 decryption known answer of
// OpenSSL's evp_test data, and the openssl command line unwrapping what this code wrapped
// (RSA-OAEP-SHA256 and SM2), with keys the command line generates at test time.
#include "vigil/crypto/key_encryption_key.h"

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/files.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/subprocess.h"
#include "vigil/testing/testdata.h"

namespace vigil::crypto {
namespace {

using ::testing::HasSubstr;
using ::vigil::testing::StatusIs;

class KeyEncryptionKeyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/kek_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  int Openssl(std::vector<std::string> args) {
    return ::vigil::testing::RunProcess("/usr/bin/openssl", std::move(args), dir_ + "/openssl.log");
  }
  // A private key (0600) and its public half, made by the openssl command line.
  void MakeKey(const std::string& name, std::vector<std::string> genpkey_args) {
    std::vector<std::string> args = {"genpkey"};
    args.insert(args.end(), genpkey_args.begin(), genpkey_args.end());
    args.insert(args.end(), {"-out", dir_ + "/" + name + ".pem"});
    ASSERT_EQ(Openssl(args), 0) << vigil::testing::ReadFile(dir_ + "/openssl.log");
    ::chmod((dir_ + "/" + name + ".pem").c_str(), 0600);
    ASSERT_EQ(Openssl({"pkey", "-in", dir_ + "/" + name + ".pem", "-pubout", "-out",
                       dir_ + "/" + name + ".pub.pem"}),
              0);
  }

  std::string dir_;
};

TEST_F(KeyEncryptionKeyTest, DecryptsOpensslsSm2KnownAnswer) {
  const std::string text = vigil::testing::ReadFile(
      vigil::testing::TestDataPath("crypto_vectors/openssl_evp_test_data/evppkey_sm2.txt"));
  const size_t begin = text.find("-----BEGIN PRIVATE KEY-----");
  const size_t end = text.find("-----END PRIVATE KEY-----");
  ASSERT_NE(begin, std::string::npos);
  const std::string pem = text.substr(begin, end + 25 - begin) + "\n";
  ASSERT_OK_AND_ASSIGN(const KeyEncryptionKey key, KeyEncryptionKey::FromPrivateKeyPem(pem));
  EXPECT_EQ(key.algorithm(), KeyWrapAlgorithm::kSm2);
  // The Decrypt stanza: a GM/T 0009 DER ciphertext of "The floofy bunnies hop at midnight".
  const size_t stanza = text.find("Decrypt = SM2_key1");
  ASSERT_NE(stanza, std::string::npos);
  const size_t input = text.find("Input = ", stanza) + 8;
  const std::string hex = text.substr(input, text.find('\n', input) - input);
  ASSERT_OK_AND_ASSIGN(const std::string plain, key.Unwrap(absl::HexStringToBytes(hex)));
  EXPECT_EQ(plain, "The floofy bunnies hop at midnight");
}

TEST_F(KeyEncryptionKeyTest, WrapsSoThatTheOpensslCommandLineUnwraps) {
  MakeKey("rsa", {"-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"});
  MakeKey("sm2", {"-algorithm", "SM2"});
  const std::string data_key(32, '\x5a');
  for (const std::string name : {"rsa", "sm2"}) {
    SCOPED_TRACE(name);
    ASSERT_OK_AND_ASSIGN(const KeyEncryptionKey pub,
                         KeyEncryptionKey::LoadPublicKeyFile(dir_ + "/" + name + ".pub.pem"));
    ASSERT_OK_AND_ASSIGN(const KeyEncryptionKey priv,
                         KeyEncryptionKey::LoadPrivateKeyFile(dir_ + "/" + name + ".pem"));
    EXPECT_EQ(pub.key_id(), priv.key_id());
    EXPECT_EQ(pub.key_id().size(), 16u);
    EXPECT_FALSE(pub.can_unwrap());
    ASSERT_OK_AND_ASSIGN(const std::string wrapped, pub.Wrap(data_key));
    EXPECT_FALSE(absl::StrContains(wrapped, data_key));
    // This code unwraps it ...
    ASSERT_OK_AND_ASSIGN(const std::string back, priv.Unwrap(wrapped));
    EXPECT_EQ(back, data_key);
    // ... and so does the openssl command line, with the parameters docs/security.md names.
    std::ofstream(dir_ + "/wrapped.bin", std::ios::binary) << wrapped;
    std::vector<std::string> args = {"pkeyutl", "-decrypt", "-inkey", dir_ + "/" + name + ".pem",
                                     "-in", dir_ + "/wrapped.bin", "-out", dir_ + "/unwrapped.bin"};
    if (name == "rsa") {
      args.insert(args.end(), {"-pkeyopt", "rsa_padding_mode:oaep", "-pkeyopt",
                               "rsa_oaep_md:sha256", "-pkeyopt", "rsa_mgf1_md:sha256"});
    }
    ASSERT_EQ(Openssl(args), 0) << vigil::testing::ReadFile(dir_ + "/openssl.log");
    EXPECT_EQ(vigil::testing::ReadFile(dir_ + "/unwrapped.bin"), data_key);
    // A public key cannot unwrap; another key refuses.
    EXPECT_THAT(pub.Unwrap(wrapped).status(), StatusIs(absl::StatusCode::kFailedPrecondition));
    std::string altered = wrapped;
    altered[altered.size() / 2] ^= 1;
    EXPECT_THAT(priv.Unwrap(altered).status(), StatusIs(absl::StatusCode::kDataLoss));
  }
  EXPECT_EQ(KeyEncryptionKey::LoadPublicKeyFile(dir_ + "/sm2.pub.pem")->algorithm(),
            KeyWrapAlgorithm::kSm2);
  EXPECT_EQ(KeyEncryptionKey::LoadPublicKeyFile(dir_ + "/rsa.pub.pem")->algorithm(),
            KeyWrapAlgorithm::kRsaOaepSha256);
}

TEST_F(KeyEncryptionKeyTest, RefusesPrivateKeysOthersMayReadWeakKeysAndOtherCurves) {
  MakeKey("sm2", {"-algorithm", "SM2"});
  ::chmod((dir_ + "/sm2.pem").c_str(), 0644);
  EXPECT_THAT(KeyEncryptionKey::LoadPrivateKeyFile(dir_ + "/sm2.pem").status(),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("(mode 644): chmod 600")));
  ::chmod((dir_ + "/sm2.pem").c_str(), 0600);
  EXPECT_OK(KeyEncryptionKey::LoadPrivateKeyFile(dir_ + "/sm2.pem").status());

  MakeKey("rsa1024", {"-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:1024"});
  EXPECT_THAT(KeyEncryptionKey::LoadPrivateKeyFile(dir_ + "/rsa1024.pem").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("at least 2048 bits")));
  MakeKey("p256", {"-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"});
  EXPECT_THAT(KeyEncryptionKey::LoadPrivateKeyFile(dir_ + "/p256.pem").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not an RSA or SM2 key")));
  // Where only the public half belongs, the private half is refused with the way to make it.
  EXPECT_THAT(KeyEncryptionKey::LoadPublicKeyFile(dir_ + "/sm2.pem").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("-pubout")));
  EXPECT_THAT(KeyEncryptionKey::FromPrivateKeyPem("not a key").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not a PEM private key")));
  EXPECT_THAT(KeyEncryptionKey::LoadPrivateKeyFile(dir_ + "/missing.pem").status(),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("missing.pem")));
}

}  // namespace
}  // namespace vigil::crypto
