#include "vigil/audit/log_hash.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::audit {
namespace {

using ::testing::HasSubstr;
using ::vigil::testing::IsOkAndHolds;
using ::vigil::testing::StatusIs;

TEST(LogHash, Sha256MatchesTheStandardsVectors) {
  // FIPS 180-2 appendix B.1 and the empty string.
  EXPECT_EQ(HashHex(Digest(HashAlgorithm::kSha256, "abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(HashHex(EmptyRootHash(HashAlgorithm::kSha256)),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(LogHash, Sm3MatchesTheStandardsVectors) {
  // GB/T 32905-2016 appendix A, examples 1 and 2.
  EXPECT_EQ(HashHex(Digest(HashAlgorithm::kSm3, "abc")),
            "66c7f0f462eeedd9d1f2d46bdc10e4e24167c4875cf2f7a2297da02b8f4ba8e0");
  std::string sixty_four;
  for (int i = 0; i < 16; ++i) sixty_four += "abcd";
  EXPECT_EQ(HashHex(Digest(HashAlgorithm::kSm3, sixty_four)),
            "debe9ff92275b8a138604889c18e5a4d6fdb70e5387e5765293dcba39c0c5732");
}

TEST(LogHash, LeafAndNodeHashesArePrefixedAsRfc9162Says) {
  for (HashAlgorithm a : {HashAlgorithm::kSha256, HashAlgorithm::kSm3}) {
    EXPECT_EQ(LeafHash(a, "record"), Digest(a, std::string("\0record", 7)));
    const Hash l = Digest(a, "l"), r = Digest(a, "r");
    std::string joined(1, '\x01');
    joined.append(reinterpret_cast<const char*>(l.data()), l.size());
    joined.append(reinterpret_cast<const char*>(r.data()), r.size());
    EXPECT_EQ(NodeHash(a, l, r), Digest(a, joined));
    EXPECT_NE(NodeHash(a, l, r), NodeHash(a, r, l));
  }
  // A leaf can never pass for a node over the same bytes: the prefixes differ.
  EXPECT_NE(LeafHash(HashAlgorithm::kSha256, "x"), Digest(HashAlgorithm::kSha256, "\x01x"));
}

TEST(LogHash, HexRoundTripsAndRefusesWhatIsNotAHash) {
  const Hash h = Digest(HashAlgorithm::kSha256, "abc");
  EXPECT_THAT(ParseHashHex(HashHex(h)), IsOkAndHolds(h));
  std::string upper = HashHex(h);
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_THAT(ParseHashHex(upper), IsOkAndHolds(h));
  EXPECT_THAT(ParseHashHex("abc"), StatusIs(absl::StatusCode::kInvalidArgument,
                                                     HasSubstr("64 hex digits")));
  std::string bad = HashHex(h);
  bad[10] = 'g';
  EXPECT_THAT(ParseHashHex(bad), StatusIs(absl::StatusCode::kInvalidArgument,
                                                   HasSubstr("character 11")));
}

TEST(LogHash, AlgorithmNamesParse) {
  EXPECT_THAT(ParseHashAlgorithm("SHA256"), IsOkAndHolds(HashAlgorithm::kSha256));
  EXPECT_THAT(ParseHashAlgorithm("sm3"), IsOkAndHolds(HashAlgorithm::kSm3));
  EXPECT_THAT(ParseHashAlgorithm("md5"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("md5")));
  EXPECT_EQ(HashAlgorithmName(HashAlgorithm::kSm3), "sm3");
}

}  // namespace
}  // namespace vigil::audit
