#include "vigil/cluster/log_entries.h"

#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/ingest/json_parser.h"
#include "vigil/ingest/json_writer.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::cluster {
namespace {

using ::testing::HasSubstr;

PaymentEntry SamplePayment() {
  PaymentEntry p;
  p.transaction = *JsonTransactionParser().Parse(
      R"({"id":"pay-1","timestamp":"2022-09-01T08:15:30.250000Z",)"
      R"("originator":{"account_id":"GB29NWBK60161331926819","name":"Acme Ltd",)"
      R"("bank_id":"NWBKGB2L","country":"GB"},)"
      R"("beneficiary":{"account_id":"DE89370400440532013000","bank_id":"COBADEFFXXX"},)"
      R"("amount":{"value":"9850.00","currency":"USD"},"payment_format":"wire",)"
      R"("remittance":"invoice 7","priority":"P0"})");
  p.input_format = "swift_mt";
  for (int k = 0; k < 32; ++k) p.input_sha256[k] = static_cast<uint8_t>(k * 7);
  p.received_us = 1'764'500'000'123'456;
  p.deadline_us = -5;  // any instant, the epoch's past included
  p.actor = "token:ops-1";
  p.traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  return p;
}

std::vector<DecidedPayment> SampleDecisions() {
  DecidedPayment a;
  a.payment_sequence = 41;
  a.transaction_id = "pay-1";
  a.score = 0.8125;
  a.rule_hit = true;
  a.alert.score = 0.9;
  a.alert.rule_hits = 3;
  a.record = std::string("VAR\x01\x08\x00 binary", 12);
  DecidedPayment b;
  b.payment_sequence = 1ULL << 40;
  b.transaction_id = "pay-2";
  b.score = std::nan("");  // rules only
  b.alert = {};            // account alerts off
  return {a, b};
}

TEST(PaymentEntryTest, RoundTripsEveryField) {
  const PaymentEntry p = SamplePayment();
  const std::string bytes = EncodePayment(p);
  EXPECT_EQ(bytes.substr(0, 4), std::string("VPE\x01", 4));
  ASSERT_OK_AND_ASSIGN(PaymentEntry back, DecodePayment(bytes));
  EXPECT_EQ(TransactionToJson(back.transaction), TransactionToJson(p.transaction));
  EXPECT_EQ(back.input_format, p.input_format);
  EXPECT_EQ(back.input_sha256, p.input_sha256);
  EXPECT_EQ(back.received_us, p.received_us);
  EXPECT_EQ(back.deadline_us, p.deadline_us);
  EXPECT_EQ(back.actor, p.actor);
  EXPECT_EQ(back.traceparent, p.traceparent);
  EXPECT_EQ(EncodePayment(back), bytes);  // canonical
}

TEST(PaymentEntryTest, EveryTruncationAndAnyTrailingByteIsRefusedNamingTheField) {
  const std::string bytes = EncodePayment(SamplePayment());
  for (size_t n = 0; n < bytes.size(); ++n) {
    const absl::Status s = DecodePayment(bytes.substr(0, n)).status();
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << n << ": " << s;
  }
  const absl::Status trailing = DecodePayment(bytes + "x").status();
  EXPECT_THAT(trailing.message(), HasSubstr("bytes after the last field"));
  std::string newer = bytes;
  newer[3] = '\x02';
  EXPECT_THAT(DecodePayment(newer).status().message(),
              HasSubstr("not a payment entry of version 1"));
  EXPECT_THAT(DecodePayment(bytes.substr(0, 6)).status().message(),
              HasSubstr("received_us at byte 4: a malformed varint"));
}

TEST(PaymentEntryTest, ATransactionThatIsNotValidIsRefusedNamingItsField) {
  PaymentEntry p = SamplePayment();
  std::string bytes = EncodePayment(p);
  // The transaction's JSON is the last field: replace it with one whose amount is not a number.
  const std::string json = TransactionToJson(p.transaction);
  const size_t at = bytes.rfind(json);
  ASSERT_NE(at, std::string::npos);
  std::string bad = json;
  bad.replace(bad.find("9850.00"), 7, "98x0.00");
  bytes.replace(at, json.size(), bad);
  const absl::Status s = DecodePayment(bytes).status();
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr("amount"));
}

TEST(DecisionBatchTest, RoundTripsEveryFieldNaNIncluded) {
  const std::vector<DecidedPayment> d = SampleDecisions();
  const std::string bytes = EncodeDecisions(d);
  ASSERT_OK_AND_ASSIGN(std::vector<DecidedPayment> back, DecodeDecisions(bytes));
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back[0].payment_sequence, 41u);
  EXPECT_EQ(back[0].transaction_id, "pay-1");
  EXPECT_EQ(back[0].score, 0.8125);
  EXPECT_TRUE(back[0].rule_hit);
  EXPECT_EQ(back[0].alert.score, 0.9);
  EXPECT_EQ(back[0].alert.rule_hits, 3u);
  EXPECT_EQ(back[0].record, d[0].record);
  EXPECT_EQ(back[1].payment_sequence, 1ULL << 40);
  EXPECT_TRUE(std::isnan(back[1].score));
  EXPECT_FALSE(back[1].alert.enabled());
  EXPECT_EQ(EncodeDecisions(back), bytes);
  ASSERT_OK_AND_ASSIGN(std::vector<DecidedPayment> none, DecodeDecisions(EncodeDecisions({})));
  EXPECT_TRUE(none.empty());
}

TEST(DecisionBatchTest, DamageIsRefusedNeverMisread) {
  const std::string bytes = EncodeDecisions(SampleDecisions());
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_EQ(DecodeDecisions(bytes.substr(0, n)).status().code(), absl::StatusCode::kDataLoss)
        << n;
  }
  // rule_hit is a byte of 0 or 1: the first entry's sits after its sequence, id and score.
  std::string bad = bytes;
  const size_t rule_hit_at = 4 + 1 + 1 + 1 + 5 + 8;
  ASSERT_EQ(bad[rule_hit_at], '\x01');
  bad[rule_hit_at] = '\x02';
  EXPECT_THAT(DecodeDecisions(bad).status().message(), HasSubstr("rule_hit of pay-1 is 2"));
  // A signalling NaN is not the canonical quiet NaN.
  std::string nan = bytes;
  const size_t score_at = 4 + 1 + 1 + 1 + 5;
  const std::string snan("\x01\x00\x00\x00\x00\x00\xf0\x7f", 8);
  nan.replace(score_at, 8, snan);
  EXPECT_THAT(DecodeDecisions(nan).status().message(), HasSubstr("not the quiet NaN"));
  EXPECT_THAT(DecodeDecisions(std::string("VDB\x01\xff\xff\xff\xff\x0f", 9)).status().message(),
              HasSubstr("is impossible"));
}

}  // namespace
}  // namespace vigil::cluster
