#include "vigil/crypto/pseudonym.h"

#include <string>

#include "absl/strings/escaping.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::crypto {
namespace {

std::string Hex(const std::string& s) { return absl::BytesToHexString(s); }

// RFC 4231 test case 6 (HMAC-SHA-256, a 131-byte key) and GM/T 0042-2015 D.3 (HMAC-SM3, a
// 32-byte key): pseudonyms are these MACs.
TEST(Pseudonymizer, IsTheKeyedHashOfTheId) {
  ASSERT_OK_AND_ASSIGN(const Pseudonymizer sha,
                       Pseudonymizer::Create(Pseudonymizer::Hash::kHmacSha256, std::string(131, '\xaa')));
  EXPECT_EQ(Hex(sha.Of("Test Using Larger Than Block-Size Key - Hash Key First")),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  std::string key;
  for (int i = 1; i <= 32; ++i) key.push_back(static_cast<char>(i));
  ASSERT_OK_AND_ASSIGN(const Pseudonymizer sm3,
                       Pseudonymizer::Create(Pseudonymizer::Hash::kHmacSm3, key));
  EXPECT_EQ(Hex(sm3.Of("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopqabcdbcdecdefdefgef"
                       "ghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "ca05e144ed05d1857840d1f318a4a8669e559fc8391f414485bfdf7bb408963a");
}

TEST(Pseudonymizer, EqualIdsMeetAndOtherKeysDiffer) {
  ASSERT_OK_AND_ASSIGN(const Pseudonymizer a,
                       Pseudonymizer::Create(Pseudonymizer::Hash::kHmacSha256, std::string(32, 'a')));
  ASSERT_OK_AND_ASSIGN(const Pseudonymizer b,
                       Pseudonymizer::Create(Pseudonymizer::Hash::kHmacSha256, std::string(32, 'b')));
  EXPECT_EQ(a.Of("GB29NWBK60161331926819"), a.Of("GB29NWBK60161331926819"));
  EXPECT_NE(a.Of("GB29NWBK60161331926819"), a.Of("GB29NWBK60161331926818"));
  EXPECT_NE(a.Of("GB29NWBK60161331926819"), b.Of("GB29NWBK60161331926819"));
  EXPECT_EQ(a.Of("x").size(), 32u);
  EXPECT_THAT(Pseudonymizer::Create(Pseudonymizer::Hash::kHmacSm3, "short").status(),
              vigil::testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                       ::testing::HasSubstr("at least 32 bytes, got 5")));
}

}  // namespace
}  // namespace vigil::crypto
