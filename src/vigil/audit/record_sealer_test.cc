#include "vigil/audit/record_sealer.h"

#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/audit/audit_record.h"
#include "vigil/audit/internal/field_sealer.h"
#include "vigil/audit/testing_log.h"
#include "vigil/core/currency.h"
#include "vigil/crypto/field_cipher.h"
#include "vigil/crypto/primitives.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::audit {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::vigil::testing::StatusIs;

// A record with every personal field there is: four parties with accounts, names and
// addresses (one with an empty line), agents with and without an account, remittance text.
AuditRecord PersonalRecord(const std::string& id = "tx-1") {
  AuditRecord r;
  r.received = FromUnixMicros(1'764'500'000'123'456);
  r.decided = FromUnixMicros(1'764'500'000'125'001);
  r.actor = "token:7f3a";
  r.source = "serve";
  r.input_format = "json";
  r.input_sha256 = Digest(HashAlgorithm::kSha256, id);
  Transaction& tx = r.transaction;
  tx.id = id;
  tx.event_time = FromUnixMicros(1'764'499'999'000'000);
  tx.originator = {.account_id = "DE89370400440532013000", .name = "Jürgen Müller",
                   .bank_id = "COBADEFFXXX", .country = "DE",
                   .address = {"Hauptstraße 1", "", "10115 Berlin"}};
  tx.beneficiary = {.account_id = "HK-0012-88831", .name = "Golden Harbour Trading Ltd",
                    .bank_id = "HSBCHKHHHKH", .country = "HK"};
  tx.amount = Money(950'000, 2, *Currency::FromCode("EUR"));
  tx.payment_format = PaymentFormat::kWire;
  tx.channel = "online";
  tx.remittance = "INV 2026/11/3 consulting";
  tx.message_type = "MT103";
  tx.agents = {{.role = AgentRole::kInstructing, .bic = "COBADEFFXXX"},
               {.role = AgentRole::kIntermediary, .bic = "IRVTUS3N", .account_id = "/889900",
                .name = "Intermediary Bank", .country = "US"}};
  tx.ultimate_originator = Party{.account_id = "UO-77", .name = "Müller Holding GmbH"};
  tx.ultimate_beneficiary = Party{.name = "Harbour Group", .address = {"1 Harbour Road"}};
  r.features = {1.5, 0.0, 3.25};
  Decision& d = r.decision;
  d.transaction_id = id;
  d.action = Action::kReview;
  d.score = 0.81;
  d.reasons = {{.kind = Reason::Kind::kRule, .code = "structuring", .text = "below 10k"}};
  d.policy_version = "p-9";
  return r;
}

// The personal values of PersonalRecord, none of which may appear in sealed bytes.
const std::vector<std::string>& PersonalValues() {
  static const std::vector<std::string> values = {
      "DE89370400440532013000", "Jürgen Müller", "Hauptstraße 1", "10115 Berlin",
      "HK-0012-88831", "Golden Harbour Trading Ltd", "INV 2026/11/3", "/889900", "UO-77",
      "Müller Holding GmbH", "Harbour Group", "1 Harbour Road"};
  return values;
}

// The stored bytes of "r" at sequence 0, sealed by "sealer".
std::string SealedBytes(const AuditRecord& r, const RecordSealer& sealer) {
  RecordBodyFields fields = RecordBodyFields::Of(r);
  fields.sealer = &sealer;
  absl::StatusOr<std::string> body = EncodeRecordBody(fields);
  EXPECT_TRUE(body.ok()) << body.status();
  std::string bytes;
  AppendAssembledRecord(r.sequence, r.previous_leaf_hash, body.ok() ? *body : "", &bytes);
  return bytes;
}

class RecordSealerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new std::string((std::filesystem::path(::testing::TempDir()) /
                            absl::StrCat("record_sealer_test_", getpid()))
                               .string());
    rsa_ = new TestKek(MakeTestKek(*dir_, "rsa", KekKind::kRsa));
    sm2_ = new TestKek(MakeTestKek(*dir_, "sm2", KekKind::kSm2));
    other_ = new TestKek(MakeTestKek(*dir_, "other", KekKind::kRsa));
  }
  static void TearDownTestSuite() {
    std::filesystem::remove_all(*dir_);
    delete rsa_;
    delete sm2_;
    delete other_;
    delete dir_;
  }

  // A sealer whose key the opener of "kek" finds.
  static std::unique_ptr<RecordSealer> Sealer(const TestKek& kek, crypto::CipherSuite suite) {
    absl::StatusOr<std::unique_ptr<RecordSealer>> sealer =
        RecordSealer::Create(suite, *kek.public_key);
    EXPECT_TRUE(sealer.ok()) << sealer.status();
    return sealer.ok() ? *std::move(sealer) : nullptr;
  }
  static RecordOpener Opener(const TestKek& kek, const RecordSealer& sealer) {
    const crypto::WrappedDataKey wrapped = sealer.wrapped_key();
    return RecordOpener(kek.private_key, [wrapped](std::string_view id) {
      return id == wrapped.id ? std::optional<crypto::WrappedDataKey>(wrapped)
                              : std::optional<crypto::WrappedDataKey>();
    });
  }

  static std::string* dir_;
  static TestKek* rsa_;
  static TestKek* sm2_;
  static TestKek* other_;
};
std::string* RecordSealerTest::dir_ = nullptr;
TestKek* RecordSealerTest::rsa_ = nullptr;
TestKek* RecordSealerTest::sm2_ = nullptr;
TestKek* RecordSealerTest::other_ = nullptr;

TEST_F(RecordSealerTest, SealedRecordsOpenToTheOriginalForBothSuitesAndBothKeyKinds) {
  for (const TestKek* kek : {rsa_, sm2_}) {
    for (crypto::CipherSuite suite :
         {crypto::CipherSuite::kAes256Gcm, crypto::CipherSuite::kSm4CtrHmacSm3}) {
      SCOPED_TRACE(absl::StrCat(kek == rsa_ ? "rsa " : "sm2 ",
                                crypto::CipherSuiteName(suite).data()));
      const std::unique_ptr<RecordSealer> sealer = Sealer(*kek, suite);
      ASSERT_NE(sealer, nullptr);
      EXPECT_EQ(sealer->suite(), suite);
      EXPECT_EQ(sealer->wrapped_key().kek_id, kek->public_key->key_id());
      const AuditRecord original = PersonalRecord();
      const std::string bytes = SealedBytes(original, *sealer);

      // Without a key: everything but the personal fields, which are listed.
      ASSERT_OK_AND_ASSIGN(AuditRecord decoded, DecodeRecord(bytes));
      EXPECT_EQ(decoded.data_key_id, sealer->data_key_id());
      std::vector<std::string> paths;
      for (const SealedField& f : decoded.sealed) paths.push_back(f.path);
      EXPECT_THAT(paths, ElementsAre("transaction.originator.account_id",
                                     "transaction.originator.name",
                                     "transaction.originator.address",
                                     "transaction.beneficiary.account_id",
                                     "transaction.beneficiary.name", "transaction.remittance",
                                     "transaction.agents[1].account_id",
                                     "transaction.ultimate_originator.account_id",
                                     "transaction.ultimate_originator.name",
                                     "transaction.ultimate_beneficiary.name",
                                     "transaction.ultimate_beneficiary.address"));
      EXPECT_EQ(decoded.transaction.originator.name, "");
      EXPECT_TRUE(decoded.transaction.originator.address.empty());
      EXPECT_EQ(decoded.transaction.originator.bank_id, "COBADEFFXXX");
      EXPECT_EQ(decoded.transaction.amount, original.transaction.amount);
      EXPECT_EQ(decoded.transaction.agents[1].name, "Intermediary Bank");  // not personal
      EXPECT_EQ(decoded.decision.action, Action::kReview);
      EXPECT_EQ(decoded.features, original.features);
      // One encoding: the decoded record re-encodes to the stored bytes.
      EXPECT_EQ(EncodeRecord(decoded), bytes);

      // With the key: the original.
      const RecordOpener opener = Opener(*kek, *sealer);
      ASSERT_OK_AND_ASSIGN(AuditRecord opened, opener.Decode(bytes));
      EXPECT_EQ(opened.transaction, original.transaction);
      EXPECT_TRUE(opened.sealed.empty());
      EXPECT_EQ(opened.data_key_id, sealer->data_key_id());
      EXPECT_EQ(opened.decision.reasons[0].text, "below 10k");
      EXPECT_EQ(sealer->records(), 1u);
    }
  }
}

TEST_F(RecordSealerTest, StoredBytesHoldNoPersonalPlaintext) {
  const AuditRecord r = PersonalRecord();
  const std::string clear = EncodeRecord(r);
  for (const std::string& value : PersonalValues()) {
    EXPECT_TRUE(absl::StrContains(clear, value)) << value;  // the test's premise
  }
  for (crypto::CipherSuite suite :
       {crypto::CipherSuite::kAes256Gcm, crypto::CipherSuite::kSm4CtrHmacSm3}) {
    const std::string bytes = SealedBytes(r, *Sealer(*rsa_, suite));
    for (const std::string& value : PersonalValues()) {
      EXPECT_FALSE(absl::StrContains(bytes, value)) << value;
    }
    EXPECT_TRUE(absl::StrContains(bytes, "COBADEFFXXX"));  // BICs stay readable
    EXPECT_TRUE(absl::StrContains(bytes, "tx-1"));
  }
}

TEST_F(RecordSealerTest, ClearRecordsEncodeAsBeforeAndSealingIsRandomized) {
  const AuditRecord r = PersonalRecord();
  // No sealer: the bytes of the clear encoding, as before field encryption.
  ASSERT_OK_AND_ASSIGN(const std::string body, EncodeRecordBody(RecordBodyFields::Of(r)));
  EXPECT_EQ(body, EncodeRecordBody(r));
  // Sealing twice gives other bytes (fresh nonces), both opening to the same record.
  const std::unique_ptr<RecordSealer> sealer = Sealer(*rsa_, crypto::CipherSuite::kAes256Gcm);
  const std::string a = SealedBytes(r, *sealer), b = SealedBytes(r, *sealer);
  EXPECT_NE(a, b);
  const RecordOpener opener = Opener(*rsa_, *sealer);
  ASSERT_OK_AND_ASSIGN(AuditRecord from_a, opener.Decode(a));
  ASSERT_OK_AND_ASSIGN(AuditRecord from_b, opener.Decode(b));
  EXPECT_EQ(from_a.transaction, from_b.transaction);
  // A record without personal fields has nothing sealed and names no data key.
  AuditRecord plain;
  plain.transaction.id = "t";
  ASSERT_OK_AND_ASSIGN(AuditRecord back, DecodeRecord(SealedBytes(plain, *sealer)));
  EXPECT_TRUE(back.sealed.empty());
  EXPECT_EQ(back.data_key_id, "");
  EXPECT_EQ(EncodeRecord(back), EncodeRecord(plain));
}

TEST_F(RecordSealerTest, AlteredCiphertextDoesNotOpen) {
  for (crypto::CipherSuite suite :
       {crypto::CipherSuite::kAes256Gcm, crypto::CipherSuite::kSm4CtrHmacSm3}) {
    const std::unique_ptr<RecordSealer> sealer = Sealer(*rsa_, suite);
    const RecordOpener opener = Opener(*rsa_, *sealer);
    ASSERT_OK_AND_ASSIGN(const AuditRecord decoded,
                         DecodeRecord(SealedBytes(PersonalRecord(), *sealer)));
    for (size_t field = 0; field < decoded.sealed.size(); ++field) {
      const std::string& sealed = decoded.sealed[field].bytes;
      for (size_t at : {size_t{1}, sealed.size() / 2, sealed.size() - 1}) {
        AuditRecord altered = decoded;
        altered.sealed[field].bytes[at] ^= 0x01;
        // Still a record (the structure holds), but its field does not open.
        ASSERT_OK_AND_ASSIGN(AuditRecord reread, DecodeRecord(EncodeRecord(altered)));
        EXPECT_THAT(opener.Open(reread),
                    StatusIs(absl::StatusCode::kDataLoss,
                             AllOf(HasSubstr(decoded.sealed[field].path),
                                   HasSubstr("does not open"), HasSubstr("tx-1"))));
      }
    }
  }
}

TEST_F(RecordSealerTest, ASealedFieldMovedToAnotherRecordOrFieldDoesNotOpen) {
  const std::unique_ptr<RecordSealer> sealer = Sealer(*rsa_, crypto::CipherSuite::kAes256Gcm);
  const RecordOpener opener = Opener(*rsa_, *sealer);
  ASSERT_OK_AND_ASSIGN(const AuditRecord one,
                       DecodeRecord(SealedBytes(PersonalRecord("tx-1"), *sealer)));
  ASSERT_OK_AND_ASSIGN(const AuditRecord two,
                       DecodeRecord(SealedBytes(PersonalRecord("tx-2"), *sealer)));
  ASSERT_EQ(two.sealed.size(), one.sealed.size());
  {
    // tx-1's originator name in tx-2's record, same field, same data key.
    AuditRecord moved = two;
    moved.sealed[1].bytes = one.sealed[1].bytes;
    ASSERT_EQ(moved.sealed[1].path, "transaction.originator.name");
    ASSERT_OK_AND_ASSIGN(AuditRecord reread, DecodeRecord(EncodeRecord(moved)));
    EXPECT_THAT(opener.Open(reread),
                StatusIs(absl::StatusCode::kDataLoss,
                         AllOf(HasSubstr("transaction.originator.name"), HasSubstr("tx-2"))));
  }
  {
    // The originator's name as the beneficiary's, in its own record.
    AuditRecord moved = one;
    ASSERT_EQ(moved.sealed[4].path, "transaction.beneficiary.name");
    moved.sealed[4].bytes = one.sealed[1].bytes;
    ASSERT_OK_AND_ASSIGN(AuditRecord reread, DecodeRecord(EncodeRecord(moved)));
    EXPECT_THAT(opener.Open(reread), StatusIs(absl::StatusCode::kDataLoss,
                                              HasSubstr("transaction.beneficiary.name")));
  }
  {
    // The same record claiming another data key: the key is unknown.
    AuditRecord renamed = one;
    renamed.data_key_id = "0123456789abcdef";
    ASSERT_OK_AND_ASSIGN(AuditRecord reread, DecodeRecord(EncodeRecord(renamed)));
    EXPECT_THAT(opener.Open(reread),
                StatusIs(absl::StatusCode::kNotFound, HasSubstr("0123456789abcdef")));
  }
}

TEST_F(RecordSealerTest, AWrongKeyEncryptionKeyIsRefusedNamingTheKeys) {
  const std::unique_ptr<RecordSealer> sealer = Sealer(*rsa_, crypto::CipherSuite::kAes256Gcm);
  const std::string bytes = SealedBytes(PersonalRecord(), *sealer);
  const RecordOpener wrong = Opener(*other_, *sealer);
  const absl::StatusOr<AuditRecord> refused = wrong.Decode(bytes);
  EXPECT_THAT(refused.status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr(absl::StrCat("data key ", sealer->data_key_id())),
                             HasSubstr(rsa_->public_key->key_id()),
                             HasSubstr(other_->public_key->key_id()))));
  // The public half cannot open.
  const RecordOpener public_only = Opener(TestKek{.private_key = rsa_->public_key}, *sealer);
  EXPECT_THAT(public_only.Decode(bytes).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("private half")));
}

TEST_F(RecordSealerTest, AnOpenerAddsExportedKeysAndUnwrapsEachOnce) {
  const std::unique_ptr<RecordSealer> sealer = Sealer(*sm2_, crypto::CipherSuite::kSm4CtrHmacSm3);
  int lookups = 0;
  RecordOpener opener(sm2_->private_key, [&](std::string_view) {
    ++lookups;
    return absl::StatusOr<std::optional<crypto::WrappedDataKey>>(std::nullopt);
  });
  const std::string bytes = SealedBytes(PersonalRecord(), *sealer);
  EXPECT_THAT(opener.Decode(bytes).status(), StatusIs(absl::StatusCode::kNotFound));
  opener.AddDataKey(sealer->wrapped_key());
  for (int i = 0; i < 3; ++i) {
    ASSERT_OK_AND_ASSIGN(AuditRecord r, opener.Decode(bytes));
    EXPECT_EQ(r.transaction, PersonalRecord().transaction);
  }
  EXPECT_EQ(lookups, 1);
}

// The sealed fields' own rules: where they may be, with a data key named iff there are some,
// all personal fields sealed or none, and a sealed value of a known suite.
TEST_F(RecordSealerTest, DecodingEnforcesTheSealedFieldRules) {
  const std::unique_ptr<RecordSealer> sealer = Sealer(*rsa_, crypto::CipherSuite::kAes256Gcm);
  ASSERT_OK_AND_ASSIGN(const AuditRecord decoded,
                       DecodeRecord(SealedBytes(PersonalRecord(), *sealer)));
  {
    AuditRecord no_key = decoded;
    no_key.data_key_id.clear();
    EXPECT_THAT(DecodeRecord(EncodeRecord(no_key)),
                StatusIs(absl::StatusCode::kDataLoss, HasSubstr("data_key_id missing")));
  }
  {
    AuditRecord stray_key = PersonalRecord();
    stray_key.data_key_id = sealer->data_key_id();  // nothing sealed: not written
    ASSERT_OK_AND_ASSIGN(AuditRecord back, DecodeRecord(EncodeRecord(stray_key)));
    EXPECT_EQ(back.data_key_id, "");
  }
  {
    // One field in the clear beside sealed ones.
    AuditRecord mixed = decoded;
    mixed.sealed.erase(mixed.sealed.begin() + 1);  // originator.name
    mixed.transaction.originator.name = "Jürgen Müller";
    EXPECT_THAT(DecodeRecord(EncodeRecord(mixed)),
                StatusIs(absl::StatusCode::kDataLoss,
                         HasSubstr("transaction.originator.name is in the clear")));
  }
  {
    AuditRecord unknown_suite = decoded;
    unknown_suite.sealed[0].bytes[0] = 9;
    EXPECT_THAT(DecodeRecord(EncodeRecord(unknown_suite)),
                StatusIs(absl::StatusCode::kDataLoss, HasSubstr("unknown cipher suite 9")));
    AuditRecord short_value = decoded;
    short_value.sealed[0].bytes.resize(20);
    EXPECT_THAT(DecodeRecord(EncodeRecord(short_value)),
                StatusIs(absl::StatusCode::kDataLoss, HasSubstr("shorter than its suite")));
  }
  {
    AuditRecord bad_id = decoded;
    bad_id.data_key_id = "not-a-key";
    EXPECT_THAT(DecodeRecord(EncodeRecord(bad_id)),
                StatusIs(absl::StatusCode::kDataLoss, HasSubstr("not a data key id")));
  }
  // Fields that are never sealed refuse wire type 6 (the bank id, field 3 of a party).
  EXPECT_FALSE(IsSealablePath("transaction.originator.bank_id"));
  EXPECT_FALSE(IsSealablePath("transaction.agents[1].name"));
  EXPECT_FALSE(IsSealablePath("transaction.agents[01].account_id"));
  EXPECT_TRUE(IsSealablePath("transaction.agents[10].account_id"));
  EXPECT_TRUE(IsSealablePath("transaction.ultimate_beneficiary.address"));
  EXPECT_THAT(SealedFieldValues("transaction.originator.address", std::string("\x05" "abc", 4)),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("runs past the end")));
  EXPECT_THAT(SealedFieldValues("transaction.originator.address", std::string("\x00", 1)),
              ::vigil::testing::IsOkAndHolds(ElementsAre("")));
}

// Any byte string that decodes re-encodes to itself, sealed records included.
TEST_F(RecordSealerTest, EveryChangedByteOfASealedRecordIsRefusedOrIsAnotherCanonicalRecord) {
  const std::unique_ptr<RecordSealer> sealer = Sealer(*rsa_, crypto::CipherSuite::kAes256Gcm);
  const std::string bytes = SealedBytes(PersonalRecord(), *sealer);
  std::mt19937_64 rng(11);
  int decoded = 0, refused = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (int trial = 0; trial < 3; ++trial) {
      std::string changed = bytes;
      changed[i] = static_cast<char>(static_cast<uint8_t>(changed[i]) ^
                                     (trial == 0 ? 1 : static_cast<uint8_t>(1 + rng() % 255)));
      absl::StatusOr<AuditRecord> r = DecodeRecord(changed);
      if (!r.ok()) {
        ++refused;
        EXPECT_THAT(r.status(), StatusIs(absl::StatusCode::kDataLoss, HasSubstr("audit record")));
        continue;
      }
      ++decoded;
      ASSERT_EQ(EncodeRecord(*r), changed) << "byte " << i;
    }
  }
  EXPECT_GT(decoded, 100);
  EXPECT_GT(refused, 100);
}

// The FieldSealer that RecordSealer seals with writes what crypto::FieldCipher opens, for every
// length and from many threads at once.
TEST(FieldSealer, SealsWhatFieldCipherOpensFromManyThreads) {
  for (crypto::CipherSuite suite :
       {crypto::CipherSuite::kAes256Gcm, crypto::CipherSuite::kSm4CtrHmacSm3}) {
    ASSERT_OK_AND_ASSIGN(const std::string key, crypto::FieldCipher::NewDataKey(suite));
    ASSERT_OK_AND_ASSIGN(const std::unique_ptr<internal::FieldSealer> sealer,
                         internal::FieldSealer::Create(suite, key));
    ASSERT_OK_AND_ASSIGN(const crypto::FieldCipher cipher, crypto::FieldCipher::Create(suite, key));
    std::vector<std::thread> threads;
    std::vector<int> failures(4, 0);
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        for (int n = 1; n < 300; ++n) {
          const std::string plaintext(static_cast<size_t>(n), static_cast<char>('a' + t));
          const std::string aad = absl::StrCat("aad ", t, " ", n);
          absl::StatusOr<std::string> sealed = sealer->Seal(plaintext, aad);
          absl::StatusOr<std::string> opened =
              sealed.ok() ? cipher.Open(*sealed, aad) : sealed.status();
          if (!opened.ok() || *opened != plaintext || cipher.Open(*sealed, aad + "x").ok()) {
            ++failures[static_cast<size_t>(t)];
          }
        }
      });
    }
    for (std::thread& t : threads) t.join();
    EXPECT_THAT(failures, ElementsAre(0, 0, 0, 0)) << crypto::CipherSuiteName(suite);
    // Nonces differ from one seal to the next.
    ASSERT_OK_AND_ASSIGN(const std::string a, sealer->Seal("same", "aad"));
    ASSERT_OK_AND_ASSIGN(const std::string b, sealer->Seal("same", "aad"));
    EXPECT_NE(a, b);
  }
  EXPECT_THAT(internal::FieldSealer::Create(crypto::CipherSuite::kAes256Gcm, "short").status(),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace vigil::audit
