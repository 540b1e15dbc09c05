#include "vigil/audit/tree_head.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::audit {
namespace {

using ::testing::HasSubstr;
using ::vigil::testing::StatusIs;

SignedTreeHead Head() {
  SignedTreeHead h;
  h.log_id = "01937a4c-0000-7000-8000-000000000001";
  h.hash = HashAlgorithm::kSha256;
  h.size = 1000;
  h.root = Digest(HashAlgorithm::kSha256, "root");
  h.time = FromUnixMicros(1'764'496'800'000'001);
  return h;
}

TEST(TreeHead, SignedBytesAreTheDocumentedText) {
  EXPECT_EQ(TreeHeadSignedBytes(Head()),
            "vigil-audit-tree-head/v1\n"
            "log 01937a4c-0000-7000-8000-000000000001\n"
            "hash sha256\n"
            "size 1000\n"
            "root " + HashHex(Digest(HashAlgorithm::kSha256, "root")) + "\n"
            "time 1764496800000001\n");
}

TEST(TreeHead, AChainedHeadSignsItsPlaceItsPredecessorAndItsCadence) {
  SignedTreeHead head = Head();
  head.chain = TreeHeadChain{.index = 7,
                             .previous = Digest(HashAlgorithm::kSha256, "head 6"),
                             .every_records = 10'000,
                             .interval_ms = 1'000};
  EXPECT_EQ(TreeHeadSignedBytes(head),
            "vigil-audit-tree-head/v2\n"
            "log 01937a4c-0000-7000-8000-000000000001\n"
            "hash sha256\n"
            "size 1000\n"
            "root " + HashHex(Digest(HashAlgorithm::kSha256, "root")) + "\n"
            "time 1764496800000001\n"
            "index 7\n"
            "previous " + HashHex(Digest(HashAlgorithm::kSha256, "head 6")) + "\n"
            "every 10000\n"
            "interval_ms 1000\n");
  EXPECT_EQ(TreeHeadHash(head), Digest(HashAlgorithm::kSha256, TreeHeadSignedBytes(head)));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<LogSigner> signer,
                       LogSigner::FromPem(*GeneratePrivateKeyPem(SignatureAlgorithm::kEd25519),
                                          "key"));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<LogVerifier> verifier,
                       LogVerifier::FromPem(signer->PublicKeyPem(), "pub"));
  ASSERT_OK(SignTreeHead(*signer, head));
  ASSERT_OK_AND_ASSIGN(SignedTreeHead back, TreeHeadFromJson(TreeHeadToJson(head)));
  EXPECT_EQ(back, head);
  // Each chain member is signed.
  for (int field = 0; field < 4; ++field) {
    SignedTreeHead changed = head;
    if (field == 0) ++changed.chain->index;
    if (field == 1) (*changed.chain->previous)[0] ^= 1;
    if (field == 2) ++changed.chain->every_records;
    if (field == 3) ++changed.chain->interval_ms;
    EXPECT_THAT(VerifyTreeHead(*verifier, changed), StatusIs(absl::StatusCode::kDataLoss));
  }
  // The first head has no predecessor; any other has one.
  head.chain->index = 0;
  EXPECT_THAT(TreeHeadFromJson(TreeHeadToJson(head)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("previous must be null")));
  head.chain->previous.reset();
  EXPECT_THAT(TreeHeadSignedBytes(head), HasSubstr("\nprevious none\n"));
  EXPECT_OK(TreeHeadFromJson(TreeHeadToJson(head)).status());
}

TEST(TreeHead, SignsVerifiesAndRoundTripsThroughJson) {
  for (SignatureAlgorithm algorithm : {SignatureAlgorithm::kEd25519, SignatureAlgorithm::kSm2}) {
    ASSERT_OK_AND_ASSIGN(std::string pem, GeneratePrivateKeyPem(algorithm));
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<LogSigner> signer, LogSigner::FromPem(pem, "key"));
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<LogVerifier> verifier,
                         LogVerifier::FromPem(signer->PublicKeyPem(), "pub"));
    SignedTreeHead head = Head();
    ASSERT_OK(SignTreeHead(*signer, head));
    EXPECT_EQ(head.signature_algorithm, algorithm);
    EXPECT_EQ(head.key_id, signer->key_id());
    EXPECT_OK(VerifyTreeHead(*verifier, head));
    ASSERT_OK_AND_ASSIGN(SignedTreeHead back, TreeHeadFromJson(TreeHeadToJson(head)));
    EXPECT_EQ(back, head);

    // Every signed field is covered.
    SignedTreeHead changed = head;
    ++changed.size;
    EXPECT_THAT(VerifyTreeHead(*verifier, changed),
                StatusIs(absl::StatusCode::kDataLoss, HasSubstr("tree head of size 1001")));
    changed = head;
    changed.root[31] ^= 1;
    EXPECT_THAT(VerifyTreeHead(*verifier, changed), StatusIs(absl::StatusCode::kDataLoss));
    changed = head;
    changed.time += std::chrono::microseconds(1);
    EXPECT_THAT(VerifyTreeHead(*verifier, changed), StatusIs(absl::StatusCode::kDataLoss));
    changed = head;
    changed.log_id[0] = 'f';
    EXPECT_THAT(VerifyTreeHead(*verifier, changed), StatusIs(absl::StatusCode::kDataLoss));
    changed = head;
    changed.hash = HashAlgorithm::kSm3;
    EXPECT_THAT(VerifyTreeHead(*verifier, changed), StatusIs(absl::StatusCode::kDataLoss));
  }
}

TEST(TreeHead, AHeadOfTheOtherAlgorithmIsRefused) {
  ASSERT_OK_AND_ASSIGN(std::string pem, GeneratePrivateKeyPem(SignatureAlgorithm::kSm2));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<LogSigner> signer, LogSigner::FromPem(pem, "key"));
  ASSERT_OK_AND_ASSIGN(std::string other, GeneratePrivateKeyPem(SignatureAlgorithm::kEd25519));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<LogVerifier> verifier, LogVerifier::FromPem(other, "o"));
  SignedTreeHead head = Head();
  ASSERT_OK(SignTreeHead(*signer, head));
  EXPECT_THAT(VerifyTreeHead(*verifier, head),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("signed with sm2")));
}

TEST(TreeHead, MalformedJsonNamesTheMember) {
  EXPECT_THAT(TreeHeadFromJson("[]"), StatusIs(absl::StatusCode::kInvalidArgument));
  ASSERT_OK_AND_ASSIGN(std::string pem, GeneratePrivateKeyPem(SignatureAlgorithm::kEd25519));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<LogSigner> signer, LogSigner::FromPem(pem, "key"));
  SignedTreeHead head = Head();
  ASSERT_OK(SignTreeHead(*signer, head));
  std::string json = TreeHeadToJson(head);
  std::string no_root = json;
  no_root.replace(no_root.find("\"root\""), 6, "\"rooot\"");
  EXPECT_THAT(TreeHeadFromJson(no_root),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("root missing")));
  std::string bad_size = json;
  bad_size.replace(bad_size.find("1000"), 4, "\"10\"");
  EXPECT_THAT(TreeHeadFromJson(bad_size),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("size must be an integer")));
}

}  // namespace
}  // namespace vigil::audit
