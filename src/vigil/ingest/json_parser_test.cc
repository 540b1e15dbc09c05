#include "vigil/ingest/json_parser.h"

#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/testdata.h"

namespace vigil {
namespace {

using ::testing::HasSubstr;
using ::vigil::testing::StatusIs;

Currency Code(const char* code) { return *Currency::FromCode(code); }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string ExamplePath(const std::string& name) {
  return vigil::testing::SourceDir() + "/examples/" + name;
}

// A valid document with every required field; tests splice members into it.
std::string Doc(const std::string& extra = "",
                const std::string& amount = R"({"value":"10.00","currency":"EUR"})") {
  return R"({"id":"t1","timestamp":"2022-09-01T00:00:00Z","originator":{"account_id":"A"},)"
         R"("beneficiary":{"account_id":"B"},"amount":)" +
         amount + extra + "}";
}

TEST(JsonTransactionParser, ParsesTheExampleFileFieldByField) {
  JsonTransactionParser parser;
  ASSERT_OK_AND_ASSIGN(Transaction tx, parser.Parse(ReadFile(ExamplePath("transaction.json"))));
  EXPECT_EQ(tx.id, "pay-20220901-000123");
  EXPECT_EQ(FormatUtc(tx.event_time), "2022-09-01T08:15:30.250000Z");
  EXPECT_EQ(tx.originator.account_id, "GB29NWBK60161331926819");
  EXPECT_EQ(tx.originator.name, "Acme Trading Ltd");
  EXPECT_EQ(tx.originator.bank_id, "NWBKGB2L");
  EXPECT_EQ(tx.originator.country, "GB");
  EXPECT_EQ(tx.beneficiary.account_id, "DE89370400440532013000");
  EXPECT_EQ(tx.beneficiary.name, "M\xC3\xBCller Logistik GmbH");
  EXPECT_EQ(tx.beneficiary.bank_id, "COBADEFFXXX");
  EXPECT_EQ(tx.beneficiary.country, "DE");
  EXPECT_EQ(tx.amount, Money(985000, 2, Code("USD")));
  ASSERT_TRUE(tx.settled_amount.has_value());
  EXPECT_EQ(*tx.settled_amount, Money(984127, 2, Code("EUR")));
  EXPECT_EQ(tx.payment_format, PaymentFormat::kWire);
  EXPECT_EQ(tx.channel, "online");
  EXPECT_EQ(tx.remittance, "Invoice 2022-0815");
  EXPECT_EQ(tx.priority, Priority::kP1);
  ASSERT_TRUE(tx.label.has_value());
  EXPECT_TRUE(tx.label->is_laundering);
  EXPECT_EQ(tx.label->typology, "structuring");
}

TEST(JsonTransactionParser, ParsesEveryExampleJsonLine) {
  JsonTransactionParser parser;
  std::istringstream lines(ReadFile(ExamplePath("transactions.jsonl")));
  int n = 0;
  for (std::string line; std::getline(lines, line);) {
    ++n;
    SCOPED_TRACE(line);
    ASSERT_OK_AND_ASSIGN(Transaction tx, parser.Parse(line));
    EXPECT_EQ(tx.id, "pay-00000" + std::to_string(n));
  }
  EXPECT_EQ(n, 5);
}

TEST(JsonTransactionParser, MinimalDocumentGetsDefaults) {
  JsonParserOptions options;
  options.default_priority = Priority::kP2;
  JsonTransactionParser parser(options);
  ASSERT_OK_AND_ASSIGN(Transaction tx, parser.Parse(Doc()));
  EXPECT_EQ(tx.id, "t1");
  EXPECT_EQ(tx.payment_format, PaymentFormat::kUnknown);
  EXPECT_EQ(tx.priority, Priority::kP2);
  EXPECT_FALSE(tx.settled_amount.has_value());
  EXPECT_FALSE(tx.label.has_value());
  EXPECT_EQ(tx.originator.name, "");
  EXPECT_EQ(tx.channel, "");
}

TEST(JsonTransactionParser, NullMeansAbsent) {
  JsonTransactionParser parser;
  ASSERT_OK_AND_ASSIGN(Transaction tx,
                       parser.Parse(Doc(R"(,"label":null,"channel":null,"settled_amount":null)")));
  EXPECT_FALSE(tx.label.has_value());
  EXPECT_FALSE(tx.settled_amount.has_value());
  // null for a required member is a missing member.
  EXPECT_THAT(parser.Parse(R"({"id":null})"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("$.id: required field 'id' is missing")));
}

TEST(JsonTransactionParser, NumericAmountIsReadFromItsDigits) {
  JsonTransactionParser parser;
  // 0.1 and 1234567890123456.78 have no exact binary double; the digits are used instead.
  ASSERT_OK_AND_ASSIGN(Transaction tx,
                       parser.Parse(Doc("", R"({"value": 0.10 ,"currency":"USD"})")));
  EXPECT_EQ(tx.amount.units(), 10);
  EXPECT_EQ(tx.amount.scale(), 2);
  ASSERT_OK_AND_ASSIGN(tx,
                       parser.Parse(Doc("", R"({"value":1234567890123456.78,"currency":"USD"})")));
  EXPECT_EQ(tx.amount.units(), 123456789012345678);
  EXPECT_EQ(tx.amount.scale(), 2);
  ASSERT_OK_AND_ASSIGN(tx,
                       parser.Parse(Doc(R"(,"settled_amount":{"currency":"JPY","value":1500})")));
  EXPECT_EQ(*tx.settled_amount, Money(1500, 0, Code("JPY")));
}

TEST(JsonTransactionParser, SettledAmountEqualToAmountIsDropped) {
  JsonTransactionParser parser;
  ASSERT_OK_AND_ASSIGN(Transaction tx,
                       parser.Parse(Doc(R"(,"settled_amount":{"value":"10.0","currency":"EUR"})")));
  EXPECT_FALSE(tx.settled_amount.has_value());
}

TEST(JsonTransactionParser, IsoMinorUnitsAreAnOption) {
  const std::string doc = Doc("", R"({"value":"100.50","currency":"JPY"})");
  JsonTransactionParser strict;
  EXPECT_THAT(strict.Parse(doc),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("$.amount.value")));
  JsonParserOptions options;
  options.enforce_iso_minor_units = false;
  JsonTransactionParser lenient(options);
  ASSERT_OK_AND_ASSIGN(Transaction tx, lenient.Parse(doc));
  EXPECT_EQ(tx.amount, Money(10050, 2, Code("JPY")));
  // Trailing zeros beyond the minor unit are fine either way; XBT has no ISO minor unit.
  EXPECT_OK(strict.Parse(Doc("", R"({"value":"100.00","currency":"JPY"})")));
  EXPECT_OK(strict.Parse(Doc("", R"({"value":"0.00012345","currency":"XBT"})")));
}

TEST(JsonTransactionParser, AcceptsEscapesAndSurroundingWhitespace) {
  JsonTransactionParser parser;
  ASSERT_OK_AND_ASSIGN(
      Transaction tx,
      parser.Parse("\n  " + Doc(R"(,"remittance":"a\"b\\c\n\u00e9\ud83d\ude00")") + "  \r\n"));
  EXPECT_EQ(tx.remittance, "a\"b\\c\n\xC3\xA9\xF0\x9F\x98\x80");
}

struct BadDoc {
  std::string json;
  const char* path;
  const char* reason;
  const char* why;
};

TEST(JsonTransactionParser, RejectsBadDocumentsWithPathAndReason) {
  const BadDoc kCases[] = {
      {R"({"timestamp":"2022-09-01T00:00:00Z","originator":{"account_id":"A"},)"
       R"("beneficiary":{"account_id":"B"},"amount":{"value":"1","currency":"EUR"}})",
       "$.id", "missing_field", "id is required"},
      {Doc("", R"({"value":"10.00","currency":"EURO"})"), "$.amount.currency", "unknown_currency",
       "not a 3-letter code"},
      {Doc("", R"({"value":"10.00","currency":"ABC"})"), "$.amount.currency", "unknown_currency",
       "not an ISO 4217 code"},
      {Doc("", R"({"value":"10.00","currency":"eur"})"), "$.amount.currency", "unknown_currency",
       "codes are upper case"},
      {Doc("", R"({"value":12.345,"currency":"USD"})"), "$.amount.value", "invalid_amount",
       "float amount with more decimals than USD has"},
      {Doc("", R"({"value":1.0000000001,"currency":"XBT"})"), "$.amount.value", "invalid_amount",
       "more than 9 decimals"},
      {Doc("", R"({"value":1e3,"currency":"USD"})"), "$.amount.value", "invalid_amount",
       "no exponent notation"},
      {Doc("", R"({"value":"1,000.00","currency":"USD"})"), "$.amount.value", "invalid_amount",
       "no thousands separators"},
      {Doc("", R"({"value":"","currency":"USD"})"), "$.amount.value", "invalid_amount",
       "empty string"},
      {Doc("", R"({"value":"-5.00","currency":"USD"})"), "$.amount.value", "negative_amount",
       "negative"},
      {Doc("", R"({"value":true,"currency":"USD"})"), "$.amount.value", "invalid_type",
       "boolean amount"},
      {Doc("", R"({"currency":"USD"})"), "$.amount.value", "missing_field", "no value"},
      {Doc("", R"({"value":"1.00"})"), "$.amount.currency", "missing_field", "no currency"},
      {Doc("", R"("10.00 EUR")"), "$.amount", "invalid_type", "amount must be an object"},
      {Doc("", R"({"value":"1.00","currency":"USD","rate":1})"), "$.amount.rate", "unknown_field",
       "unknown member of amount"},
      {Doc(R"(,"settled_amount":{"value":"1.00","currency":"XXX"})"), "$.settled_amount.currency",
       "unknown_currency", "settled amount is checked too"},
      {Doc(R"(,"nickname":"x")"), "$.nickname", "unknown_field", "strict schema"},
      {Doc(R"(,"odd key":1)"), "$[\"odd key\"]", "unknown_field", "path quotes odd keys"},
      {Doc(R"(,"id":"t2")"), "$.id", "duplicate_field", "id twice"},
      {R"({"id":42,"timestamp":"2022-09-01T00:00:00Z"})", "$.id", "invalid_type",
       "id must be a string"},
      {R"({"id":"","timestamp":"2022-09-01T00:00:00Z"})", "$.id", "invalid_value", "empty id"},
      {R"({"id":")" + std::string(257, 'x') + R"("})", "$.id", "invalid_value",
       "id longer than 256 bytes"},
      {R"({"id":"a\u0001b"})", "$.id", "invalid_value", "control character in id"},
      {R"({"id":"t","timestamp":"2022-09-01 00:00"})", "$.timestamp", "invalid_timestamp",
       "not RFC 3339"},
      {R"({"id":"t","timestamp":1661990400})", "$.timestamp", "invalid_type",
       "epoch numbers are not accepted"},
      {R"({"id":"t","timestamp":"2022-09-01T00:00:00Z","originator":"A"})", "$.originator",
       "invalid_type", "party must be an object"},
      {R"({"id":"t","timestamp":"2022-09-01T00:00:00Z","originator":{"name":"X"}})",
       "$.originator.account_id", "missing_field", "account_id is required"},
      {R"({"id":"t","timestamp":"2022-09-01T00:00:00Z","originator":{"account_id":""}})",
       "$.originator.account_id", "empty_account", "empty account"},
      {R"({"id":"t","timestamp":"2022-09-01T00:00:00Z","originator":{"account_id":7}})",
       "$.originator.account_id", "invalid_type", "account id must be a string"},
      {R"({"id":"t","timestamp":"2022-09-01T00:00:00Z","beneficiary":{"account_id":"B",)"
       R"("country":"gb"}})",
       "$.beneficiary.country", "invalid_value", "country is upper case"},
      {R"({"id":"t","timestamp":"2022-09-01T00:00:00Z","beneficiary":{"account_id":"B",)"
       R"("country":"GBR"}})",
       "$.beneficiary.country", "invalid_value", "alpha-2, not alpha-3"},
      {R"({"id":"t","timestamp":"2022-09-01T00:00:00Z","beneficiary":{"account_id":"B",)"
       R"("iban":"X"}})",
       "$.beneficiary.iban", "unknown_field", "unknown party member"},
      {Doc(R"(,"payment_format":"Credit Card")"), "$.payment_format", "unknown_payment_format",
       "JSON uses snake-case names"},
      {Doc(R"(,"payment_format":"swift")"), "$.payment_format", "unknown_payment_format",
       "unknown format"},
      {Doc(R"(,"priority":"P3")"), "$.priority", "invalid_value", "P0, P1 or P2"},
      {Doc(R"(,"priority":1)"), "$.priority", "invalid_type", "priority is a string"},
      {Doc(R"(,"channel":["web"])"), "$.channel", "invalid_type", "channel is a string"},
      {Doc(R"(,"label":{"typology":"cycle"})"), "$.label.is_laundering", "missing_field",
       "label needs is_laundering"},
      {Doc(R"(,"label":{"is_laundering":1})"), "$.label.is_laundering", "invalid_type",
       "is_laundering is a boolean"},
      {Doc(R"(,"label":{"is_laundering":true,"score":0.9})"), "$.label.score", "unknown_field",
       "unknown label member"},
      {"[1,2]", "$", "invalid_type", "top level must be an object"},
      {"\"tx\"", "$", "invalid_type", "top level must be an object"},
      {"", "$", "invalid_json", "empty document"},
      {"   ", "$", "invalid_json", "whitespace only"},
      {R"({"id":"t1","timestamp":"2022-09-01T00:00:00Z","amount":{"value":"1)", "$.amount.value",
       "invalid_json", "truncated inside a string"},
      {R"({"id":"t1","timestamp":"2022-09-01T00:00:00Z","amount":{"value":"1.00")", "$.amount",
       "invalid_json", "truncated after a member"},
      {R"({"id":"t1",)", "$", "invalid_json", "truncated after a comma"},
      {R"({"id":"t1" "timestamp":"x"})", "$", "invalid_json", "missing comma"},
      {R"({"id":"t1",})", "$", "invalid_json", "trailing comma"},
      {R"({"id":'t1'})", "$.id", "invalid_json", "single quotes"},
      {Doc() + "}", "$", "invalid_json", "trailing garbage"},
      {R"({"id":"t1","remittance":"caf\xE9"})", "$.remittance", "invalid_json",
       "invalid UTF-8 (Latin-1 byte)"},
      {R"({"id":"t1","remittance":"\xED\xA0\x80"})", "$.remittance", "invalid_json",
       "UTF-8 encoded surrogate"},
      {R"({"id":"t1","remittance":"\xC0\xAF"})", "$.remittance", "invalid_json", "overlong UTF-8"},
      {R"({"id":"t1","remittance":"a\qb"})", "$.remittance", "invalid_json", "bad escape"},
      {R"({"id":"t1","remittance":"\ud800"})", "$.remittance", "invalid_json",
       "lone surrogate escape"},
      {"{\"id\":\"t1\",\"remittance\":\"a\tb\"}", "$.remittance", "invalid_json",
       "raw control character"},
  };
  JsonTransactionParser parser;
  for (const BadDoc& c : kCases) {
    SCOPED_TRACE(::testing::Message() << c.json << " (" << c.why << ")");
    Transaction tx;
    RecordError error;
    ASSERT_FALSE(parser.Parse(c.json, &tx, &error));
    EXPECT_EQ(error.field, c.path) << error.ToString();
    EXPECT_EQ(error.reason, c.reason) << error.ToString();
    EXPECT_EQ(error.source, "<request>");
    EXPECT_EQ(error.line, 0);
    EXPECT_FALSE(error.message.empty());
    if (error.reason == "invalid_json") {
      EXPECT_GE(error.byte_offset, 0);
      EXPECT_THAT(error.message, HasSubstr("at byte"));
    } else {
      EXPECT_EQ(error.byte_offset, -1);
    }
  }
}

// An amount beyond the fixed point is an error on the amount, naming the limit, whether it
// fits a double or 64 bits (read from its digits) or not even that (simdjson refuses the
// document: the amount is still named).
TEST(JsonTransactionParser, AnAmountOverflowIsReportedOnTheAmountWithTheLimit) {
  struct Case {
    std::string value;
    const char* path;
    const char* limit;
  };
  const Case cases[] = {
      {"99999999999999999999", "$.amount.value", "at most 9223372036854775807"},
      {"\"99999999999999999999\"", "$.amount.value", "at most 9223372036854775807"},
      {"18446744073709551615", "$.amount.value", "at most 9223372036854775807"},
      {"\"92233720368547758.08\"", "$.amount.value", "at most 92233720368547758.07"},
      {"1e400", "$.amount.value", "invalid character 'e'"},
  };
  JsonTransactionParser parser;
  for (const Case& c : cases) {
    const std::string json =
        Doc("", absl::StrCat(R"({"value":)", c.value, R"(,"currency":"USD"})"));
    SCOPED_TRACE(json);
    Transaction tx;
    RecordError error;
    ASSERT_FALSE(parser.Parse(json, &tx, &error));
    EXPECT_EQ(error.field, c.path) << error.ToString();
    EXPECT_EQ(error.reason, "invalid_amount") << error.ToString();
    EXPECT_THAT(error.message, HasSubstr(c.limit)) << error.ToString();
  }
  // Another number simdjson refuses is still the document's error.
  const std::string other = absl::StrCat(
      R"({"id":"t","timestamp":"2022-09-01T00:00:00Z","originator":{"account_id":"A"},)",
      R"("beneficiary":{"account_id":"B"},"amount":{"value":"1","currency":"EUR"},"label":1e400})");
  Transaction tx;
  RecordError error;
  ASSERT_FALSE(parser.Parse(other, &tx, &error));
  EXPECT_EQ(error.field, "$") << error.ToString();
}

TEST(JsonTransactionParser, SyntaxErrorGivesByteOffset) {
  JsonTransactionParser parser;
  Transaction tx;
  RecordError error;
  //                     0123456789012345678901234
  ASSERT_FALSE(parser.Parse(R"({"id":"t1","amount":{"value": }})", &tx, &error));
  EXPECT_EQ(error.byte_offset, 30);
  EXPECT_EQ(error.field, "$.amount.value");
  EXPECT_EQ(error.ToString(),
            "<request>: $.amount.value: JSON syntax error at byte 30: unexpected character '}', "
            "expected a value");
  // Truncated: the offset is the end of the input.
  ASSERT_FALSE(parser.Parse(R"({"id":"t1")", &tx, &error));
  EXPECT_EQ(error.byte_offset, 10);
  EXPECT_THAT(error.message, HasSubstr("end of input"));
}

TEST(JsonTransactionParser, StatusFormIsInvalidArgumentWithReason) {
  JsonTransactionParser parser;
  EXPECT_THAT(parser.Parse(Doc(R"(,"nickname":"x")")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("<request>: $.nickname: unknown field 'nickname'")));
  EXPECT_THAT(parser.Parse(Doc(R"(,"nickname":"x")")),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("[unknown_field]")));
}

TEST(JsonTransactionParser, SourceNameOption) {
  JsonParserOptions options;
  options.source_name = "batch-7";
  JsonTransactionParser parser(options);
  Transaction tx;
  RecordError error;
  ASSERT_FALSE(parser.Parse("{}", &tx, &error));
  EXPECT_EQ(error.source, "batch-7");
  EXPECT_EQ(error.field, "$.id");
}

TEST(JsonTransactionParser, ReusedTransactionIsFullyOverwritten) {
  JsonTransactionParser parser;
  Transaction tx;
  RecordError error;
  ASSERT_TRUE(parser.Parse(ReadFile(ExamplePath("transaction.json")), &tx, &error));
  ASSERT_FALSE(parser.Parse(R"({"id":)", &tx, &error));  // a failure in between
  ASSERT_TRUE(parser.Parse(Doc(), &tx, &error)) << error.ToString();
  Transaction fresh;
  ASSERT_TRUE(parser.Parse(Doc(), &fresh, &error));
  EXPECT_EQ(tx, fresh);
}

TEST(JsonTransactionParser, AcceptsEveryPaymentFormatAndPriorityName) {
  JsonTransactionParser parser;
  for (int i = 0; i < kNumPaymentFormats; ++i) {
    const auto format = static_cast<PaymentFormat>(i);
    const std::string name(PaymentFormatJsonName(format));
    SCOPED_TRACE(name);
    ASSERT_OK_AND_ASSIGN(Transaction tx, parser.Parse(Doc(R"(,"payment_format":")" + name + "\"")));
    EXPECT_EQ(tx.payment_format, format);
  }
  for (const auto& [name, priority] :
       std::vector<std::pair<std::string, Priority>>{{"P0", Priority::kP0},
                                                     {"P1", Priority::kP1},
                                                     {"P2", Priority::kP2},
                                                     {"p2", Priority::kP2}}) {
    ASSERT_OK_AND_ASSIGN(Transaction tx, parser.Parse(Doc(R"(,"priority":")" + name + "\"")));
    EXPECT_EQ(tx.priority, priority);
  }
}

TEST(JsonTransactionParser, IsMovable) {
  JsonTransactionParser a;
  JsonTransactionParser b = std::move(a);
  EXPECT_OK(b.Parse(Doc()));
}

}  // namespace
}  // namespace vigil
