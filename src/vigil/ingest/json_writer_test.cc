#include "vigil/ingest/json_writer.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/ingest/csv_parser.h"
#include "vigil/ingest/json_parser.h"
#include "vigil/ingest/transaction_reader.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/testdata.h"

namespace vigil {
namespace {

Currency Code(const char* code) { return *Currency::FromCode(code); }

Transaction FullTransaction() {
  Transaction tx;
  tx.id = "pay-1";
  tx.event_time = *ParseRfc3339("2022-09-01T08:15:30.25Z");
  tx.originator = {"GB29NWBK60161331926819", "Acme \"Trading\" Ltd", "NWBKGB2L", "GB"};
  tx.beneficiary = {"DE89370400440532013000", "M\xC3\xBCller", "COBADEFFXXX", "DE"};
  tx.amount = Money(985000, 2, Code("USD"));
  tx.settled_amount = Money(984127, 2, Code("EUR"));
  tx.payment_format = PaymentFormat::kWire;
  tx.channel = "online";
  tx.remittance = "line1\nline2\ttab\\";
  tx.priority = Priority::kP0;
  tx.label = Label{true, "structuring"};
  return tx;
}

TEST(TransactionToJson, WritesTheSchemaCompactly) {
  EXPECT_EQ(TransactionToJson(FullTransaction()),
            R"({"id":"pay-1","timestamp":"2022-09-01T08:15:30.250000Z",)"
            R"("originator":{"account_id":"GB29NWBK60161331926819","name":"Acme \"Trading\" Ltd",)"
            R"("bank_id":"NWBKGB2L","country":"GB"},)"
            R"("beneficiary":{"account_id":"DE89370400440532013000","name":"M)"
            "\xC3\xBC"
            R"(ller","bank_id":"COBADEFFXXX","country":"DE"},)"
            R"("amount":{"value":"9850.00","currency":"USD"},)"
            R"("settled_amount":{"value":"9841.27","currency":"EUR"},)"
            R"("payment_format":"wire","channel":"online","remittance":"line1\nline2\ttab\\",)"
            R"("priority":"P0","label":{"is_laundering":true,"typology":"structuring"}})");
}

TEST(TransactionToJson, LeavesOutUnsetOptionalMembers) {
  Transaction tx;
  tx.id = "t";
  tx.event_time = FromUnixMicros(0);
  tx.originator.account_id = "A";
  tx.beneficiary.account_id = "B";
  tx.amount = Money(5, 0, Code("JPY"));
  EXPECT_EQ(TransactionToJson(tx),
            R"({"id":"t","timestamp":"1970-01-01T00:00:00.000000Z",)"
            R"("originator":{"account_id":"A"},"beneficiary":{"account_id":"B"},)"
            R"("amount":{"value":"5","currency":"JPY"},"payment_format":"unknown",)"
            R"("priority":"P1"})");
  tx.label = Label{false, ""};
  EXPECT_THAT(TransactionToJson(tx), ::testing::HasSubstr(R"("label":{"is_laundering":false}})"));
}

TEST(TransactionToJson, EscapesControlCharactersAndReplacesInvalidUtf8) {
  Transaction tx = FullTransaction();
  tx.remittance = std::string("a\x01z\x1F\b\f\r\xFF\xC3", 9) + "\xE2\x82\xAC";  // ends with a euro
  const std::string json = TransactionToJson(tx);
  EXPECT_THAT(json, ::testing::HasSubstr(R"("remittance":"a\u0001z\u001f\b\f\r\ufffd\ufffd)"
                                         "\xE2\x82\xAC\""));
  // Whatever the bytes, the output is valid JSON that parses back.
  JsonTransactionParser parser;
  ASSERT_OK_AND_ASSIGN(Transaction back, parser.Parse(json));
  EXPECT_EQ(back.remittance,
            std::string("a\x01z\x1F\b\f\r", 7) + "\xEF\xBF\xBD\xEF\xBF\xBD\xE2\x82\xAC");
}

TEST(TransactionToJson, RoundTripsThroughTheParser) {
  const Transaction tx = FullTransaction();
  JsonTransactionParser parser;
  ASSERT_OK_AND_ASSIGN(Transaction back, parser.Parse(TransactionToJson(tx)));
  EXPECT_EQ(back, tx);
}

TEST(TransactionToJson, PaymentMessageMembersRoundTrip) {
  Transaction tx = FullTransaction();
  tx.beneficiary.address = {"Musterstrasse 1", "", "10115 Berlin"};
  tx.message_type = "pacs.008.001.08";
  tx.reference = "E2E-1";
  tx.uetr = "8403c004-66b2-40fc-acba-9f11d1a4ad84";
  tx.value_date = "2025-08-27";
  tx.charges = "SHA";
  tx.purpose = "GDDS";
  tx.agents = {{.role = AgentRole::kOrderingInstitution, .bic = "NWBKGB2LXXX", .country = "GB"},
               {.role = AgentRole::kIntermediary, .account_id = "/123", .name = "Bank \"X\""}};
  tx.ultimate_originator = Party{.name = "Parent plc", .country = "GB"};
  tx.ack_reference = "190325AAAALT2XAXXX0000000000";
  tx.ack_time = "2019-03-25T06:12:00.000000Z";
  const std::string json = TransactionToJson(tx);
  EXPECT_THAT(json, ::testing::HasSubstr(R"("ack_reference":"190325AAAALT2XAXXX0000000000",)"
                                         R"("ack_time":"2019-03-25T06:12:00.000000Z")"));
  EXPECT_THAT(json, ::testing::HasSubstr(
                        R"("agents":[{"role":"ordering_institution","bic":"NWBKGB2LXXX","country":"GB"},)"));
  EXPECT_THAT(json, ::testing::HasSubstr(R"("address":["Musterstrasse 1","","10115 Berlin"])"));
  EXPECT_THAT(json, ::testing::HasSubstr(R"("ultimate_originator":{"name":"Parent plc","country":"GB"})"));
  JsonTransactionParser parser;
  ASSERT_OK_AND_ASSIGN(Transaction back, parser.Parse(json));
  EXPECT_EQ(back, tx);
  // Reused for a transaction without them: nothing carries over.
  ASSERT_OK_AND_ASSIGN(Transaction plain, parser.Parse(TransactionToJson(FullTransaction())));
  EXPECT_EQ(plain, FullTransaction());
}

TEST(JsonTransactionParser, PaymentMessageMembersAreChecked) {
  const std::string head =
      R"({"id":"a","timestamp":"2022-09-01T00:00:00Z","originator":{"account_id":"1"},)"
      R"("beneficiary":{"account_id":"2"},"amount":{"value":"1","currency":"USD"},)";
  JsonTransactionParser parser;
  const auto error = [&](const std::string& tail) {
    return std::string(parser.Parse(head + tail + "}").status().message());
  };
  EXPECT_THAT(error(R"("agents":[{"bic":"X"}])"),
              ::testing::HasSubstr("$.agents[0].role: required field 'role' is missing"));
  EXPECT_THAT(error(R"("agents":[{"role":"banker"}])"),
              ::testing::HasSubstr("unknown agent role 'banker'"));
  EXPECT_THAT(error(R"("agents":[{"role":"intermediary","country":"Germany"}])"),
              ::testing::HasSubstr("$.agents[0].country"));
  EXPECT_THAT(error(R"("agents":{"role":"intermediary"})"),
              ::testing::HasSubstr("expected an array of objects"));
  EXPECT_THAT(error(R"("agents":[{"role":"intermediary","swift":"X"}])"),
              ::testing::HasSubstr("unknown field 'swift'"));
  EXPECT_THAT(error(R"("ultimate_originator":{"name":"P","address":"one line"})"),
              ::testing::HasSubstr("$.ultimate_originator.address: expected an array of strings"));
  EXPECT_THAT(error(R"("uetr":42)"), ::testing::HasSubstr("$.uetr: expected a string"));
  ASSERT_OK_AND_ASSIGN(Transaction tx, parser.Parse(head + R"("ultimate_beneficiary":{"name":"P"}})"));
  ASSERT_TRUE(tx.ultimate_beneficiary.has_value());
  EXPECT_EQ(tx.ultimate_beneficiary->name, "P");
  EXPECT_TRUE(tx.ultimate_beneficiary->account_id.empty());
}

TEST(TransactionToJson, AppendReusesTheString) {
  std::string out = "prefix ";
  AppendTransactionJson(FullTransaction(), &out);
  EXPECT_EQ(out, "prefix " + TransactionToJson(FullTransaction()));
}

TEST(TransactionToJson, RoundTripsEveryAmlworldSampleRow) {
  ReaderOptions options;
  ASSERT_OK_AND_ASSIGN(
      std::unique_ptr<TransactionReader> reader,
      OpenTransactionFile(vigil::testing::TestDataPath("amlworld/HI-Small_Trans.sample.csv"),
                          options));
  // AMLworld Yen amounts carry 2 decimals, more than JPY's ISO minor unit.
  JsonParserOptions json_options;
  json_options.enforce_iso_minor_units = false;
  JsonTransactionParser parser(json_options);
  Transaction tx, back;
  RecordError error;
  int n = 0;
  for (;;) {
    ASSERT_OK_AND_ASSIGN(ReadResult r, reader->Next(&tx, &error));
    if (r == ReadResult::kEnd) break;
    ASSERT_EQ(r, ReadResult::kRecord) << error.ToString();
    const std::string json = TransactionToJson(tx);
    ASSERT_TRUE(parser.Parse(json, &back, &error)) << error.ToString() << "\n" << json;
    ASSERT_EQ(back, tx) << json;
    ++n;
  }
  EXPECT_EQ(n, 667);
}

}  // namespace
}  // namespace vigil
