#include "vigil/audit/audit_record.h"

#include <bit>
#include <cmath>
#include <random>
#include <string>

#include "absl/strings/escaping.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/core/currency.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::audit {
namespace {

using ::testing::HasSubstr;
using ::vigil::testing::StatusIs;

Money Usd(int64_t cents) { return Money(cents, 2, *Currency::FromCode("USD")); }

AuditRecord FullRecord() {
  AuditRecord r;
  r.sequence = 300;
  for (size_t i = 0; i < r.previous_leaf_hash.size(); ++i) r.previous_leaf_hash[i] = uint8_t(i);
  r.received = FromUnixMicros(1'764'500'000'123'456);
  r.decided = FromUnixMicros(1'764'500'000'125'001);
  r.actor = "token:7f3a";
  r.source = "serve";
  r.input_format = "json";
  r.input_sha256 = Digest(HashAlgorithm::kSha256, "{\"id\":\"tx-1\"}");
  Transaction& tx = r.transaction;
  tx.id = "tx-1";
  tx.event_time = FromUnixMicros(-5);  // before 1970: zig-zag
  tx.originator = {.account_id = "ACC-1", .name = "Jane Roe", .bank_id = "DEUTDEFF",
                   .country = "DE"};
  tx.beneficiary = {.account_id = "ACC-2", .name = "", .bank_id = "", .country = "IR"};
  tx.amount = Usd(-1234567);
  tx.settled_amount = Money(0, 0, *Currency::FromCode("JPY"));
  tx.payment_format = PaymentFormat::kWire;
  tx.channel = "api";
  tx.remittance = "invoice 42 — ünïcode";
  tx.priority = Priority::kP2;
  tx.label = Label{.is_laundering = false, .typology = ""};
  r.features = {0.0, -0.0, 1.5, std::nan(""), -std::numeric_limits<double>::infinity(), 1e-300};
  Decision& d = r.decision;
  d.transaction_id = "tx-1";
  for (size_t i = 0; i < d.trace_id.bytes.size(); ++i) d.trace_id.bytes[i] = uint8_t(0xf0 + i);
  d.traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
  d.action = Action::kBlock;
  d.score = 0.0;  // a score of zero is a score: present
  d.reasons = {{.kind = Reason::Kind::kRule, .code = "structuring", .text = "three below 10k"},
               {},  // an all-default reason still counts as one
               {.kind = Reason::Kind::kModel, .code = "amount", .text = "high",
                .contribution = -0.25, .shadow = true},
               {.kind = Reason::Kind::kScreening, .code = "SDN-1", .text = "name hit"}};
  d.feature_schema_version = "fs-3";
  d.policy_version = "p-9";
  d.model_version = "m-2";
  d.model_role = "champion";
  d.model_backend = "cpu-fallback";
  d.shadow_model_version = "m-3";
  d.shadow_score = 0.75;
  d.degraded = true;
  d.degraded_reason = "model_timeout";
  d.timings = {{"parse", std::chrono::microseconds(3)}, {"total", std::chrono::microseconds(0)}};
  d.screening_score = 0.0;  // screened, nothing found: present
  d.screening_lists = {"OFAC SDN@sha256:ab", ""};  // repeated: an empty element still counts
  d.accounts_scored = true;
  d.originator_account = {.score = 0.625, .rule_hits = 3, .alert = true,
                          .cause = AccountAlertCause::kRuleHits};
  d.beneficiary_account = {};  // nothing known: an empty standing, still present
  return r;
}

// Field-by-field equality, NaN equal to NaN and -0.0 distinct from +0.0 (bit equality).
void ExpectSame(const AuditRecord& a, const AuditRecord& b) {
  EXPECT_EQ(a.sequence, b.sequence);
  EXPECT_EQ(a.previous_leaf_hash, b.previous_leaf_hash);
  EXPECT_EQ(a.payment_fingerprint, b.payment_fingerprint);
  EXPECT_EQ(a.event, b.event);
  EXPECT_EQ(a.received, b.received);
  EXPECT_EQ(a.decided, b.decided);
  EXPECT_EQ(a.actor, b.actor);
  EXPECT_EQ(a.source, b.source);
  EXPECT_EQ(a.input_format, b.input_format);
  EXPECT_EQ(a.input_sha256, b.input_sha256);
  EXPECT_EQ(a.transaction, b.transaction);
  ASSERT_EQ(a.features.size(), b.features.size());
  for (size_t i = 0; i < a.features.size(); ++i) {
    if (std::isnan(a.features[i])) {
      EXPECT_TRUE(std::isnan(b.features[i])) << i;
    } else {
      EXPECT_EQ(std::bit_cast<uint64_t>(a.features[i]), std::bit_cast<uint64_t>(b.features[i]))
          << i;
    }
  }
  const Decision &x = a.decision, &y = b.decision;
  EXPECT_EQ(x.transaction_id, y.transaction_id);
  EXPECT_EQ(x.trace_id, y.trace_id);
  EXPECT_EQ(x.traceparent, y.traceparent);
  EXPECT_EQ(x.action, y.action);
  EXPECT_EQ(std::isnan(x.score), std::isnan(y.score));
  if (!std::isnan(x.score)) {
    EXPECT_EQ(x.score, y.score);
  }
  ASSERT_EQ(x.reasons.size(), y.reasons.size());
  for (size_t i = 0; i < x.reasons.size(); ++i) {
    EXPECT_EQ(x.reasons[i].kind, y.reasons[i].kind) << i;
    EXPECT_EQ(x.reasons[i].code, y.reasons[i].code) << i;
    EXPECT_EQ(x.reasons[i].text, y.reasons[i].text) << i;
    EXPECT_EQ(x.reasons[i].contribution, y.reasons[i].contribution) << i;
    EXPECT_EQ(x.reasons[i].shadow, y.reasons[i].shadow) << i;
  }
  EXPECT_EQ(x.feature_schema_version, y.feature_schema_version);
  EXPECT_EQ(x.policy_version, y.policy_version);
  EXPECT_EQ(x.model_version, y.model_version);
  EXPECT_EQ(x.model_role, y.model_role);
  EXPECT_EQ(x.model_backend, y.model_backend);
  EXPECT_EQ(x.shadow_model_version, y.shadow_model_version);
  EXPECT_EQ(std::isnan(x.shadow_score), std::isnan(y.shadow_score));
  if (!std::isnan(x.shadow_score)) {
    EXPECT_EQ(x.shadow_score, y.shadow_score);
  }
  EXPECT_EQ(x.degraded, y.degraded);
  EXPECT_EQ(x.degraded_reason, y.degraded_reason);
  EXPECT_EQ(std::isnan(x.screening_score), std::isnan(y.screening_score));
  if (!std::isnan(x.screening_score)) {
    EXPECT_EQ(x.screening_score, y.screening_score);
  }
  EXPECT_EQ(x.screening_lists, y.screening_lists);
  EXPECT_EQ(x.accounts_scored, y.accounts_scored);
  for (const auto& [p, q] : {std::pair{&x.originator_account, &y.originator_account},
                             std::pair{&x.beneficiary_account, &y.beneficiary_account}}) {
    EXPECT_EQ(std::isnan(p->score), std::isnan(q->score));
    if (!std::isnan(p->score)) {
      EXPECT_EQ(p->score, q->score);
    }
    EXPECT_EQ(p->rule_hits, q->rule_hits);
    EXPECT_EQ(p->alert, q->alert);
    EXPECT_EQ(p->cause, q->cause);
  }
  ASSERT_EQ(x.timings.size(), y.timings.size());
  for (size_t i = 0; i < x.timings.size(); ++i) {
    EXPECT_EQ(x.timings[i].stage, y.timings[i].stage);
    EXPECT_EQ(x.timings[i].elapsed, y.timings[i].elapsed);
  }
}

TEST(AuditRecord, EveryFieldRoundTrips) {
  const AuditRecord r = FullRecord();
  const std::string bytes = EncodeRecord(r);
  absl::StatusOr<AuditRecord> back = DecodeRecord(bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectSame(*back, r);
  EXPECT_EQ(EncodeRecord(*back), bytes);
}

// Field 13: present when recorded, absent (all zero) otherwise; never all zero when present.
TEST(AuditRecord, ThePaymentFingerprintRoundTripsAndIsAbsentWhenNotRecorded) {
  AuditRecord r = FullRecord();
  const std::string without = EncodeRecord(r);
  for (size_t i = 0; i < r.payment_fingerprint.size(); ++i) {
    r.payment_fingerprint[i] = static_cast<uint8_t>(0xa0 + i);
  }
  const std::string with = EncodeRecord(r);
  ASSERT_EQ(with.size(), without.size() + 2 + 32);  // key 13 << 3 | 2, length 32, the hash
  EXPECT_EQ(with.substr(with.size() - 34, 2), std::string("\x6a\x20"));
  ASSERT_OK_AND_ASSIGN(AuditRecord back, DecodeRecord(with));
  ExpectSame(back, r);
  ASSERT_OK_AND_ASSIGN(AuditRecord old, DecodeRecord(without));
  EXPECT_EQ(old.payment_fingerprint, Hash{});
  std::string zero = without + std::string("\x6a\x20") + std::string(32, '\0');
  EXPECT_THAT(DecodeRecord(zero), StatusIs(absl::StatusCode::kDataLoss,
                                           ::testing::HasSubstr("payment_fingerprint")));
}

// Field 14: an event the server recorded about itself. It names no transaction and holds no
// row; a record with neither a transaction id nor an event is refused.
TEST(AuditRecord, AnEventRecordRoundTripsAndNamesNoTransaction) {
  AuditRecord e;
  e.sequence = 7;
  e.previous_leaf_hash[0] = 0x11;
  e.received = e.decided = FromUnixMicros(1'764'500'000'000'000);
  e.source = "drift";
  e.input_format = "json";
  e.event = R"({"id":3,"kind":"freeze","subject":"monitor"})";
  e.input_sha256 = Digest(HashAlgorithm::kSha256, e.event);
  const std::string bytes = EncodeRecord(e);
  const std::string tail = std::string("\x72") + static_cast<char>(e.event.size()) + e.event;
  EXPECT_EQ(bytes.substr(bytes.size() - tail.size()), tail);  // key 14 << 3 | 2, length, JSON
  ASSERT_OK_AND_ASSIGN(AuditRecord back, DecodeRecord(bytes));
  EXPECT_EQ(back.event, e.event);
  EXPECT_EQ(back.source, "drift");
  EXPECT_TRUE(back.transaction.id.empty());
  EXPECT_EQ(EncodeRecord(back), bytes);
  ASSERT_OK_AND_ASSIGN(RecordLink link, DecodeRecordLink(bytes));
  EXPECT_TRUE(link.transaction_id.empty());

  AuditRecord with_tx = e;
  with_tx.transaction.id = "t1";
  EXPECT_THAT(DecodeRecord(EncodeRecord(with_tx)),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("an event (field 14) with a transaction")));
  AuditRecord with_row = e;
  with_row.features = {1.0};
  EXPECT_THAT(DecodeRecord(EncodeRecord(with_row)),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("with a feature row")));
  AuditRecord neither = e;
  neither.event.clear();
  EXPECT_THAT(DecodeRecord(EncodeRecord(neither)),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("transaction.id missing")));
}

// The members payment messages bring (SWIFT MT, ISO 20022): agents in order, address lines
// (an empty one kept in its place), ultimate parties without an account.
TEST(AuditRecord, PaymentMessageFieldsRoundTrip) {
  AuditRecord r = FullRecord();
  Transaction& tx = r.transaction;
  tx.originator.address = {"NO 852-60", "", "SRI LANKA"};
  tx.message_type = "MT103";
  tx.reference = "990OTT250827000";
  tx.uetr = "8403c004-66b2-40fc-acba-9f11d1a4ad84";
  tx.value_date = "2025-08-27";
  tx.charges = "BEN";
  tx.purpose = "GDDS";
  tx.agents = {{.role = AgentRole::kInstructing, .bic = "ABCDLKLXXXX"},
               {.role = AgentRole::kIntermediary, .bic = "", .account_id = "/123",
                .name = "INTERMEDIARY BANK GMBH", .country = "DE"},
               {.role = AgentRole::kAccountWithInstitution, .bic = "SMBCTHBKXXX",
                .country = "TH"}};
  tx.ultimate_originator = Party{.name = "Parent Holding"};
  tx.ultimate_beneficiary = Party{};  // present, empty
  tx.ack_reference = "250827ABCDLKLXAXXX1234123456";  // the ACK's MIR, kept with the message
  tx.ack_time = "2025-08-27T10:31:00Z";
  const std::string bytes = EncodeRecord(r);
  ASSERT_OK_AND_ASSIGN(AuditRecord back, DecodeRecord(bytes));
  ExpectSame(back, r);
  EXPECT_EQ(back.transaction.ack_reference, tx.ack_reference);
  EXPECT_EQ(back.transaction.ack_time, tx.ack_time);
  // Absent members are not written (TheEncodingIsTheDocumentedBytes pins the bytes of a
  // record without them).
  EXPECT_LT(EncodeRecord(FullRecord()).size(), bytes.size());
  // An agent role beyond the list is refused, naming the path.
  AuditRecord bad = r;
  bad.transaction.agents.resize(1);
  bad.transaction.agents[0].role = static_cast<AgentRole>(kNumAgentRoles);
  EXPECT_THAT(DecodeRecord(EncodeRecord(bad)),
              ::vigil::testing::StatusIs(absl::StatusCode::kDataLoss,
                                         ::testing::HasSubstr("transaction.agents[0].role")));
}

// P0 is the zero value, left out when written: it must read back as P0, not as Transaction's
// default (P1).
TEST(AuditRecord, TheUrgentPriorityRoundTrips) {
  AuditRecord r = FullRecord();
  for (Priority p : {Priority::kP0, Priority::kP1, Priority::kP2}) {
    r.transaction.priority = p;
    const std::string bytes = EncodeRecord(r);
    ASSERT_OK_AND_ASSIGN(AuditRecord back, DecodeRecord(bytes));
    EXPECT_EQ(back.transaction.priority, p);
    EXPECT_EQ(EncodeRecord(back), bytes);
  }
}

TEST(AuditRecord, AbsentScoresStayAbsentAndTheFirstRecordHasNoPreviousHash) {
  AuditRecord r;
  r.transaction.id = "t";
  r.decision.transaction_id = "t";
  absl::StatusOr<AuditRecord> back = DecodeRecord(EncodeRecord(r));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_TRUE(std::isnan(back->decision.score));
  EXPECT_TRUE(std::isnan(back->decision.shadow_score));
  EXPECT_FALSE(back->transaction.settled_amount.has_value());
  EXPECT_FALSE(back->transaction.label.has_value());
  EXPECT_EQ(back->sequence, 0u);
}

TEST(AuditRecord, TheEncodingIsTheDocumentedBytes) {
  // docs/audit.md: magic "VAR", version 1; field 8 (input_sha256, wire 2) = key 0x42, 32 bytes;
  // field 9 (transaction, wire 2) = key 0x4a holding field 1 (id) = key 0x0a and field 10
  // (priority, varint) = key 0x50 with P1 = 1. Zero fields left out: sequence 0, no previous
  // hash, times 0, empty strings, default amount, empty decision.
  AuditRecord r;
  r.transaction.id = "t";
  const std::string expected = absl::HexStringToBytes(
      "56415201"
      "4220" "0000000000000000000000000000000000000000000000000000000000000000"
      "4a05" "0a0174" "5001");
  EXPECT_EQ(absl::BytesToHexString(EncodeRecord(r)), absl::BytesToHexString(expected));
  // Sequence 1 adds field 1 (varint) and field 2 (previous hash), before everything else.
  r.sequence = 1;
  r.previous_leaf_hash.fill(0xab);
  const std::string with_chain = EncodeRecord(r);
  EXPECT_EQ(absl::BytesToHexString(with_chain.substr(0, 8)), "5641520108011220");
  EXPECT_EQ(static_cast<uint8_t>(with_chain[8]), 0xab);
}

// docs/audit.md: decision field 19 (accounts) holds 1 originator and 2 beneficiary, both always
// present; a standing holds 1 score (fixed64), 2 rule_hits, 3 alert, 4 alert_cause (varints).
TEST(AuditRecord, AccountStandingsAreTheDocumentedBytes) {
  AuditRecord r;
  r.transaction.id = "t";
  r.decision.accounts_scored = true;
  r.decision.originator_account = {.score = 0.5, .rule_hits = 2, .alert = true,
                                   .cause = AccountAlertCause::kScore};
  const std::string bytes = EncodeRecord(r);
  // Field 19, wire 2: key 0x9a 0x01; 19 bytes: 0x0a 0x0f (originator, 15 bytes: 0x09 + 8
  // bytes of 0.5, 0x10 0x02, 0x18 0x01, 0x20 0x01), 0x12 0x00 (beneficiary, empty).
  const std::string accounts = absl::HexStringToBytes(
      "9a0113" "0a0f" "09000000000000e03f" "1002" "1801" "2001" "1200");
  EXPECT_NE(bytes.find(accounts), std::string::npos) << absl::BytesToHexString(bytes);
  absl::StatusOr<AuditRecord> back = DecodeRecord(bytes);
  ASSERT_TRUE(back.ok()) << back.status();
  ExpectSame(*back, r);

  // Without account scores the field is absent (records written before it read the same).
  r.decision.accounts_scored = false;
  EXPECT_EQ(EncodeRecord(r).find(absl::HexStringToBytes("9a01")), std::string::npos);
}

TEST(AuditRecord, AnAccountAlertNeedsItsCauseAndACauseItsAlert) {
  AuditRecord r;
  r.transaction.id = "t";
  r.decision.accounts_scored = true;
  // The writer writes what it is given; the reader refuses the inconsistent standing.
  r.decision.originator_account = {.rule_hits = 1, .alert = true,
                                   .cause = AccountAlertCause::kNone};
  EXPECT_THAT(DecodeRecord(EncodeRecord(r)).status(),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("decision.accounts.originator.alert_cause")));
  r.decision.originator_account = {.rule_hits = 1, .alert = false,
                                   .cause = AccountAlertCause::kScore};
  EXPECT_THAT(DecodeRecord(EncodeRecord(r)).status(),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("present exactly when alert is")));
}

TEST(AuditRecord, NanFeaturesAreCanonical) {
  AuditRecord r = FullRecord();
  r.features = {std::bit_cast<double>(uint64_t{0x7ff0000000000001}),  // a signalling NaN
                std::bit_cast<double>(uint64_t{0xfff8000000000000})};  // a negative quiet NaN
  AuditRecord canonical = r;
  canonical.features = {std::nan(""), std::nan("")};
  EXPECT_EQ(EncodeRecord(r), EncodeRecord(canonical));
}

TEST(AuditRecord, BodyAndChainAssembleToTheWholeRecord) {
  const AuditRecord r = FullRecord();
  std::string assembled;
  AppendAssembledRecord(r.sequence, r.previous_leaf_hash, EncodeRecordBody(r), &assembled);
  EXPECT_EQ(assembled, EncodeRecord(r));
  // Encoding from references gives the same bytes.
  EXPECT_EQ(*EncodeRecordBody(RecordBodyFields{.received = r.received,
                                              .decided = r.decided,
                                              .actor = r.actor,
                                              .source = r.source,
                                              .input_format = r.input_format,
                                              .input_sha256 = &r.input_sha256,
                                              .transaction = &r.transaction,
                                              .features = r.features,
                                              .decision = &r.decision}),
            EncodeRecordBody(r));
  absl::StatusOr<RecordLink> link = DecodeRecordLink(assembled);
  ASSERT_TRUE(link.ok()) << link.status();
  EXPECT_EQ(link->sequence, 300u);
  EXPECT_EQ(link->previous_leaf_hash, r.previous_leaf_hash);
  EXPECT_EQ(link->transaction_id, "tx-1");
}

// One encoding per record: any byte string that decodes re-encodes to itself. Checked over
// every single-byte change of a full record (each position, several values) and every
// truncation: a change is either refused or yields a different record with exactly those bytes.
TEST(AuditRecord, EveryChangedByteIsRefusedOrIsAnotherCanonicalRecord) {
  const std::string bytes = EncodeRecord(FullRecord());
  std::mt19937_64 rng(7);
  int decoded = 0, refused = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    for (int trial = 0; trial < 6; ++trial) {
      std::string changed = bytes;
      const uint8_t delta = trial == 0 ? 1 : static_cast<uint8_t>(1 + rng() % 255);
      changed[i] = static_cast<char>(static_cast<uint8_t>(changed[i]) ^ delta);
      absl::StatusOr<AuditRecord> r = DecodeRecord(changed);
      if (!r.ok()) {
        ++refused;
        EXPECT_THAT(r.status(), StatusIs(absl::StatusCode::kDataLoss, HasSubstr("audit record")));
        continue;
      }
      ++decoded;
      ASSERT_EQ(EncodeRecord(*r), changed) << "byte " << i << " ^ " << int{delta};
    }
  }
  for (size_t n = 0; n < bytes.size(); ++n) {
    absl::StatusOr<AuditRecord> r = DecodeRecord(bytes.substr(0, n));
    if (r.ok()) {
      EXPECT_EQ(EncodeRecord(*r), bytes.substr(0, n)) << n;
    }
  }
  // Both outcomes occur (text bytes change into other valid text; framing bytes break).
  EXPECT_GT(decoded, 100);
  EXPECT_GT(refused, 100);
}

TEST(AuditRecord, NonCanonicalEncodingsAreRefusedNamingTheField) {
  AuditRecord base;
  base.transaction.id = "t";
  const std::string header = absl::HexStringToBytes("56415201");
  const std::string hash = "4220" + std::string(64, '0');
  const std::string tx = "4a030a0174";
  auto decode = [&](const std::string& hex) {
    return DecodeRecord(header + absl::HexStringToBytes(hex));
  };
  ASSERT_TRUE(decode(hash + tx).ok());
  // A zero value written out (field 3, received = 0).
  EXPECT_THAT(decode("1800" + hash + tx),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("received at byte 4: zero value")));
  // Fields out of order: the transaction before the input hash.
  EXPECT_THAT(decode(tx + hash), StatusIs(absl::StatusCode::kDataLoss, HasSubstr("out of order")));
  // The same field twice.
  EXPECT_THAT(decode(hash + hash + tx),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("out of order")));
  // An overlong varint: received = 1 written in two bytes.
  EXPECT_THAT(decode("188100" + hash + tx),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("shortest form")));
  // A field this version does not know (field 15, varint).
  EXPECT_THAT(decode(hash + tx + "7801"),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("unknown field 15")));
  // A sealed field (wire type 6) is reserved, not readable by this version.
  EXPECT_THAT(decode("2e0101" + hash + tx),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("field 5 is sealed")));
  // Wrong wire type for the transaction (varint).
  EXPECT_THAT(decode(hash + "4801"),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("transaction at byte 38: wire type 0")));
  // A nested field's error names its path.
  EXPECT_THAT(decode(hash + "4a05" "0a0174" "5003"),  // priority 3 does not exist
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("transaction.priority")));
  // A length past the end.
  EXPECT_THAT(decode(hash + "4a09" "0a0174"),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("runs past the end")));
  // Another format version, and no magic at all.
  EXPECT_THAT(DecodeRecord(absl::HexStringToBytes("56415202") + absl::HexStringToBytes(hash + tx)),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("record format version 2")));
  EXPECT_THAT(DecodeRecord("{\"json\":1}"),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("not an audit record")));
  // The chain fields must agree: a previous hash at sequence 0 is refused.
  EXPECT_THAT(decode("1220" + std::string(64, 'a') + hash + tx),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("present iff the sequence")));
  // The input hash and the transaction id are required.
  EXPECT_THAT(decode(tx), StatusIs(absl::StatusCode::kDataLoss, HasSubstr("input_sha256 missing")));
  EXPECT_THAT(decode(hash), StatusIs(absl::StatusCode::kDataLoss, HasSubstr("transaction.id")));
}

}  // namespace
}  // namespace vigil::audit

namespace vigil::audit {
namespace {

TEST(AuditRecord, MarkSealedFieldPutsAStandInWhereTheFieldStands) {
  Transaction tx;
  tx.agents.resize(2);
  tx.ultimate_beneficiary = Party{};
  ASSERT_TRUE(MarkSealedField("transaction.originator.address", "[sealed]", tx).ok());
  EXPECT_EQ(tx.originator.address, std::vector<std::string>{"[sealed]"});
  ASSERT_TRUE(MarkSealedField("transaction.agents[1].account_id", "[sealed]", tx).ok());
  EXPECT_EQ(tx.agents[1].account_id, "[sealed]");
  ASSERT_TRUE(MarkSealedField("transaction.ultimate_beneficiary.name", "[sealed]", tx).ok());
  EXPECT_EQ(tx.ultimate_beneficiary->name, "[sealed]");
  ASSERT_TRUE(MarkSealedField("transaction.remittance", "[sealed]", tx).ok());
  EXPECT_EQ(tx.remittance, "[sealed]");
  // Not a sealed field; a place the transaction lacks.
  EXPECT_EQ(MarkSealedField("transaction.amount", "x", tx).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(MarkSealedField("transaction.ultimate_originator.name", "x", tx).code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(MarkSealedField("transaction.agents[5].account_id", "x", tx).code(),
            absl::StatusCode::kDataLoss);
}

}  // namespace
}  // namespace vigil::audit
