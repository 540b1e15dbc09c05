#include "vigil/crypto/field_cipher.h"

#include <set>
#include <string>

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/crypto/primitives.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::crypto {
namespace {

using ::testing::HasSubstr;
using ::vigil::testing::StatusIs;

class FieldCipherTest : public ::testing::TestWithParam<CipherSuite> {};

TEST_P(FieldCipherTest, RoundTripsAndBindsTheFieldToItsPlace) {
  ASSERT_OK_AND_ASSIGN(std::string key, FieldCipher::NewDataKey(GetParam()));
  ASSERT_OK_AND_ASSIGN(const FieldCipher cipher, FieldCipher::Create(GetParam(), key));
  for (const std::string& plaintext : {std::string(), std::string("Müller Logistik GmbH"),
                                      std::string(10000, 'x')}) {
    ASSERT_OK_AND_ASSIGN(const std::string sealed, cipher.Seal(plaintext, "record 7/beneficiary.name"));
    EXPECT_EQ(static_cast<uint8_t>(sealed[0]), static_cast<uint8_t>(GetParam()));
    EXPECT_FALSE(absl::StrContains(sealed, "Logistik"));
    ASSERT_OK_AND_ASSIGN(const std::string opened, cipher.Open(sealed, "record 7/beneficiary.name"));
    EXPECT_EQ(opened, plaintext);
    // Moved to another record or field: refused.
    EXPECT_THAT(cipher.Open(sealed, "record 8/beneficiary.name").status(),
                StatusIs(absl::StatusCode::kDataLoss, HasSubstr("authentication failed")));
  }
}

TEST_P(FieldCipherTest, EveryAlteredByteAndAnotherKeyAreRefused) {
  ASSERT_OK_AND_ASSIGN(const FieldCipher cipher,
                       FieldCipher::Create(GetParam(), *FieldCipher::NewDataKey(GetParam())));
  ASSERT_OK_AND_ASSIGN(const FieldCipher other,
                       FieldCipher::Create(GetParam(), *FieldCipher::NewDataKey(GetParam())));
  ASSERT_OK_AND_ASSIGN(const std::string sealed, cipher.Seal("GB29NWBK60161331926819", "a"));
  for (size_t i = 0; i < sealed.size(); ++i) {
    std::string altered = sealed;
    altered[i] ^= 0x20;
    const absl::Status s = cipher.Open(altered, "a").status();
    EXPECT_THAT(s, StatusIs(absl::StatusCode::kDataLoss)) << "byte " << i;
    EXPECT_FALSE(absl::StrContains(s.message(), "GB29")) << s;
  }
  EXPECT_THAT(other.Open(sealed, "a").status(), StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(cipher.Open(sealed.substr(0, 5), "a").status(),
              StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(cipher.Open("", "a").status(), StatusIs(absl::StatusCode::kDataLoss));
}

TEST_P(FieldCipherTest, NoncesAreFreshForEverySeal) {
  ASSERT_OK_AND_ASSIGN(const FieldCipher cipher,
                       FieldCipher::Create(GetParam(), *FieldCipher::NewDataKey(GetParam())));
  std::set<std::string> seen;
  for (int i = 0; i < 200; ++i) seen.insert(*cipher.Seal("same name", "same place"));
  EXPECT_EQ(seen.size(), 200u);
}

INSTANTIATE_TEST_SUITE_P(Suites, FieldCipherTest,
                         ::testing::Values(CipherSuite::kAes256Gcm, CipherSuite::kSm4CtrHmacSm3),
                         [](const auto& param_info) {
                           return param_info.param == CipherSuite::kAes256Gcm ? "Aes256Gcm" : "Sm4";
                         });

// The national profile's layout, recomputed from the primitives: suite, counter, SM4-CTR
// ciphertext, HMAC-SM3 over suite || counter || len(aad) || aad || ciphertext.
TEST(FieldCipher, Sm4ProfileIsEncryptThenMacAsDocumented) {
  const std::string key = std::string(16, '\x11') + std::string(32, '\x22');
  ASSERT_OK_AND_ASSIGN(const FieldCipher cipher, FieldCipher::Create(CipherSuite::kSm4CtrHmacSm3, key));
  ASSERT_OK_AND_ASSIGN(const std::string sealed, cipher.Seal("Acme Trading Ltd", "aad"));
  ASSERT_EQ(sealed.size(), 1 + 16 + 16 + 32u);
  const std::string counter = sealed.substr(1, 16);
  const std::string ciphertext = sealed.substr(17, 16);
  ASSERT_OK_AND_ASSIGN(const std::string expected_ct,
                       Sm4Ctr(key.substr(0, 16), counter, "Acme Trading Ltd"));
  EXPECT_EQ(ciphertext, expected_ct);
  std::string mac_input = std::string(1, '\x02') + counter + std::string(7, '\0') + "\x03" + "aad" +
                          ciphertext;
  EXPECT_EQ(sealed.substr(33), HmacSm3(key.substr(16), mac_input));
}

TEST(FieldCipher, KeysOfTheWrongLengthAndUnknownSuitesAreRefused) {
  EXPECT_THAT(FieldCipher::Create(CipherSuite::kAes256Gcm, std::string(16, 'k')).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("aes-256-gcm data key is 32 bytes, got 16")));
  EXPECT_THAT(FieldCipher::Create(CipherSuite::kSm4CtrHmacSm3, std::string(32, 'k')).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("48 bytes")));
  ASSERT_OK_AND_ASSIGN(const FieldCipher aes,
                       FieldCipher::Create(CipherSuite::kAes256Gcm, std::string(32, 'k')));
  ASSERT_OK_AND_ASSIGN(const FieldCipher sm4,
                       FieldCipher::Create(CipherSuite::kSm4CtrHmacSm3, std::string(48, 'k')));
  EXPECT_THAT(sm4.Open(*aes.Seal("x", ""), "").status(),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("not sealed with sm4-ctr-hmac-sm3")));
  EXPECT_EQ(*ParseCipherSuite("sm4-ctr-hmac-sm3"), CipherSuite::kSm4CtrHmacSm3);
  EXPECT_THAT(ParseCipherSuite("sm4-gcm").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("aes-256-gcm or sm4-ctr-hmac-sm3")));
}

}  // namespace
}  // namespace vigil::crypto
