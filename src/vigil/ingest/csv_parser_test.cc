#include "vigil/ingest/csv_parser.h"

#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/testdata.h"

namespace vigil {
namespace {

using ::testing::HasSubstr;
using ::vigil::testing::StatusIs;

Currency Code(const char* code) { return *Currency::FromCode(code); }

AmlworldCsvParser SampleParser(bool typology = false) {
  AmlworldCsvOptions options;
  options.source_name = "HI-Small_Trans.sample.csv";
  options.typology_column = typology;
  return AmlworldCsvParser(options);
}

std::vector<std::string> ReadLines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(AmlworldCsvParser, ForHeaderAcceptsTheIbmHeader) {
  ASSERT_OK_AND_ASSIGN(AmlworldCsvParser parser,
                       AmlworldCsvParser::ForHeader(kAmlworldCsvHeader, {}));
  EXPECT_FALSE(parser.options().typology_column);
  EXPECT_EQ(parser.column_count(), 11);
}

TEST(AmlworldCsvParser, ForHeaderAcceptsTypologyColumnAndCrlf) {
  const std::string header = std::string(kAmlworldCsvHeader) + ",Typology\r";
  ASSERT_OK_AND_ASSIGN(AmlworldCsvParser parser, AmlworldCsvParser::ForHeader(header, {}));
  EXPECT_TRUE(parser.options().typology_column);
  EXPECT_EQ(parser.column_count(), 12);
}

TEST(AmlworldCsvParser, ForHeaderRejectsOtherHeaders) {
  EXPECT_THAT(AmlworldCsvParser::ForHeader("Timestamp,From Bank", {}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("2 columns")));
  EXPECT_THAT(
      AmlworldCsvParser::ForHeader("Timestamp,From Bank,Acct,To Bank,Account,Amount Received,"
                                   "Receiving Currency,Amount Paid,Payment Currency,"
                                   "Payment Format,Is Laundering",
                                   {}),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("column 3 is 'Acct'")));
  EXPECT_THAT(AmlworldCsvParser::ForHeader(std::string(kAmlworldCsvHeader) + ",Pattern", {}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("expected 'Typology'")));
}

TEST(AmlworldCsvParser, ParsesFirstSampleRowFieldByField) {
  AmlworldCsvParser parser = SampleParser();
  Transaction tx;
  RecordError error;
  ASSERT_TRUE(
      parser.Parse("2022/09/01 00:09,014433,801CA7940,004523,8119D8750,51.43,US Dollar,"
                   "51.43,US Dollar,Credit Card,0",
                   2, &tx, &error))
      << error.ToString();
  EXPECT_EQ(tx.id, "HI-Small_Trans.sample.csv:2");
  EXPECT_EQ(FormatUtc(tx.event_time), "2022-09-01T00:09:00.000000Z");
  EXPECT_EQ(tx.originator.bank_id, "014433");  // leading zero kept
  EXPECT_EQ(tx.originator.account_id, "801CA7940");
  EXPECT_EQ(tx.originator.name, "");
  EXPECT_EQ(tx.originator.country, "");
  EXPECT_EQ(tx.beneficiary.bank_id, "004523");
  EXPECT_EQ(tx.beneficiary.account_id, "8119D8750");
  EXPECT_EQ(tx.amount, Money(5143, 2, Code("USD")));
  EXPECT_EQ(tx.amount.scale(), 2);
  EXPECT_FALSE(tx.settled_amount.has_value());  // same amount, same currency
  EXPECT_EQ(tx.payment_format, PaymentFormat::kCreditCard);
  EXPECT_EQ(tx.priority, Priority::kP2);
  ASSERT_TRUE(tx.label.has_value());
  EXPECT_FALSE(tx.label->is_laundering);
  EXPECT_EQ(tx.label->typology, "");
  EXPECT_EQ(tx.channel, "");
  EXPECT_EQ(tx.remittance, "");
}

TEST(AmlworldCsvParser, CrossCurrencyRowKeepsReceivedAsSettledAmount) {
  // Sample line 118: 833.11 Rupee paid, 11.34 US Dollar received.
  AmlworldCsvParser parser = SampleParser();
  Transaction tx;
  RecordError error;
  ASSERT_TRUE(
      parser.Parse("2022/09/01 09:06,0071,80505C1E0,0071,80505C1E0,11.34,US Dollar,"
                   "833.11,Rupee,ACH,0",
                   118, &tx, &error));
  EXPECT_EQ(tx.amount, Money(83311, 2, Code("INR")));
  ASSERT_TRUE(tx.settled_amount.has_value());
  EXPECT_EQ(*tx.settled_amount, Money(1134, 2, Code("USD")));
  EXPECT_EQ(tx.payment_format, PaymentFormat::kAch);
  EXPECT_EQ(tx.originator.account_id, tx.beneficiary.account_id);
}

TEST(AmlworldCsvParser, SameCurrencyDifferentAmountKeepsSettledAmount) {
  AmlworldCsvParser parser = SampleParser();
  Transaction tx;
  RecordError error;
  ASSERT_TRUE(
      parser.Parse("2022/09/01 09:06,01,A,02,B,99.00,Euro,100.00,Euro,Wire,0", 5, &tx, &error));
  ASSERT_TRUE(tx.settled_amount.has_value());
  EXPECT_EQ(*tx.settled_amount, Money(9900, 2, Code("EUR")));
  // Equal amounts written with different scales are the same amount: no settled amount.
  ASSERT_TRUE(
      parser.Parse("2022/09/01 09:06,01,A,02,B,100.0,Euro,100.00,Euro,Wire,0", 6, &tx, &error));
  EXPECT_FALSE(tx.settled_amount.has_value());
}

TEST(AmlworldCsvParser, BitcoinAmountIsExact) {
  // Sample line 83.
  AmlworldCsvParser parser = SampleParser();
  Transaction tx;
  RecordError error;
  ASSERT_TRUE(
      parser.Parse("2022/09/01 05:09,0053744,813C6F691,0053744,813C6F691,0.054614,"
                   "Bitcoin,0.054614,Bitcoin,Bitcoin,0",
                   83, &tx, &error));
  EXPECT_EQ(tx.amount.units(), 54614);
  EXPECT_EQ(tx.amount.scale(), 6);
  EXPECT_EQ(tx.amount.currency().code(), "XBT");
  EXPECT_EQ(tx.payment_format, PaymentFormat::kBitcoin);
}

TEST(AmlworldCsvParser, LaunderingRowAndLeadingZeroIds) {
  // Sample line 22.
  AmlworldCsvParser parser = SampleParser();
  Transaction tx;
  RecordError error;
  ASSERT_TRUE(
      parser.Parse("2022/09/04 07:35,021174,800737690,010,800449990,19332.59,US Dollar,"
                   "19332.59,US Dollar,ACH,1",
                   22, &tx, &error));
  EXPECT_EQ(tx.id, "HI-Small_Trans.sample.csv:22");
  EXPECT_EQ(FormatUtc(tx.event_time), "2022-09-04T07:35:00.000000Z");
  EXPECT_EQ(tx.beneficiary.bank_id, "010");
  ASSERT_TRUE(tx.label.has_value());
  EXPECT_TRUE(tx.label->is_laundering);
}

TEST(AmlworldCsvParser, DerivedIdIsSourceNameColonPhysicalLine) {
  AmlworldCsvOptions options;
  options.source_name = "day1.csv";
  AmlworldCsvParser parser(options);
  Transaction tx;
  RecordError error;
  const std::string row =
      "2022/09/01 00:09,014433,801CA7940,004523,8119D8750,51.43,US Dollar,51.43,US Dollar,Cash,0";
  ASSERT_TRUE(parser.Parse(row, 1234567, &tx, &error));
  EXPECT_EQ(tx.id, "day1.csv:1234567");
  // Stable: the same record at the same position gets the same id.
  Transaction again;
  ASSERT_TRUE(parser.Parse(row, 1234567, &again, &error));
  EXPECT_EQ(again, tx);
}

TEST(AmlworldCsvParser, ReadsTypologyColumnAndPriorityOption) {
  AmlworldCsvOptions options;
  options.typology_column = true;
  options.default_priority = Priority::kP0;
  AmlworldCsvParser parser(options);
  Transaction tx;
  RecordError error;
  ASSERT_TRUE(
      parser.Parse("2022/09/01 00:09,1,A,2,B,10.00,Euro,10.00,Euro,Wire,1,fan-out", 3, &tx, &error))
      << error.ToString();
  ASSERT_TRUE(tx.label.has_value());
  EXPECT_TRUE(tx.label->is_laundering);
  EXPECT_EQ(tx.label->typology, "fan-out");
  EXPECT_EQ(tx.priority, Priority::kP0);
  // Empty typology for normal traffic.
  ASSERT_TRUE(
      parser.Parse("2022/09/01 00:09,1,A,2,B,10.00,Euro,10.00,Euro,Wire,0,", 4, &tx, &error));
  EXPECT_EQ(tx.label->typology, "");
}

TEST(AmlworldCsvParser, Rfc4180QuotedFields) {
  AmlworldCsvOptions options;
  options.typology_column = true;
  AmlworldCsvParser parser(options);
  Transaction tx;
  RecordError error;
  // Quoted plain field, escaped quotes, an embedded comma and an embedded line break.
  ASSERT_TRUE(
      parser.Parse("\"2022/09/01 00:09\",1,\"A\"\"1\",2,B,10.00,\"Euro\",10.00,Euro,"
                   "\"Credit Card\",1,\"cycle, \"\"3 hops\"\"\nsecond line\"",
                   9, &tx, &error))
      << error.ToString();
  EXPECT_EQ(tx.originator.account_id, "A\"1");
  EXPECT_EQ(tx.payment_format, PaymentFormat::kCreditCard);
  EXPECT_EQ(tx.label->typology, "cycle, \"3 hops\"\nsecond line");
  // An empty quoted field is empty.
  EXPECT_FALSE(
      parser.Parse("2022/09/01 00:09,1,\"\",2,B,10.00,Euro,10.00,Euro,Wire,1,x", 10, &tx, &error));
  EXPECT_EQ(error.reason, "empty_account");
}

TEST(AmlworldCsvParser, IgnoresTrailingCarriageReturn) {
  AmlworldCsvParser parser = SampleParser();
  Transaction tx;
  RecordError error;
  ASSERT_TRUE(
      parser.Parse("2022/09/01 00:09,1,A,2,B,10.00,Euro,10.00,Euro,Wire,1\r", 2, &tx, &error))
      << error.ToString();
  EXPECT_TRUE(tx.label->is_laundering);
}

TEST(AmlworldCsvParser, AcceptsSecondsInTimestamp) {
  AmlworldCsvParser parser = SampleParser();
  Transaction tx;
  RecordError error;
  ASSERT_TRUE(
      parser.Parse("2024/02/29 23:59:58,1,A,2,B,10.00,Euro,10.00,Euro,Wire,0", 2, &tx, &error));
  EXPECT_EQ(FormatUtc(tx.event_time), "2024-02-29T23:59:58.000000Z");
}

struct BadRow {
  const char* row;
  const char* reason;
  const char* field;
  const char* why;
};

TEST(AmlworldCsvParser, RejectsBadRowsWithReasonAndColumn) {
  const BadRow kCases[] = {
      {"2022/09/01 00:09,1,A,2,B,10.00,Euro,10.00,Euro,Wire", "wrong_column_count", "",
       "10 columns"},
      {"2022/09/01 00:09,1,A,2,B,10.00,Euro,10.00,Euro,Wire,0,extra", "wrong_column_count", "",
       "12 columns without a Typology header"},
      {"", "wrong_column_count", "", "an empty record is one empty column"},
      {",1,A,2,B,10.00,Euro,10.00,Euro,Wire,0", "missing_field", "Timestamp", "empty"},
      {"2022-09-01 00:09,1,A,2,B,10.00,Euro,10.00,Euro,Wire,0", "invalid_timestamp", "Timestamp",
       "dashes are not the AMLworld layout"},
      {"2022/02/30 00:09,1,A,2,B,10.00,Euro,10.00,Euro,Wire,0", "invalid_timestamp", "Timestamp",
       "no such date"},
      {"2022/09/01 24:00,1,A,2,B,10.00,Euro,10.00,Euro,Wire,0", "invalid_timestamp", "Timestamp",
       "hour out of range"},
      {"2022/09/01 0:09,1,A,2,B,10.00,Euro,10.00,Euro,Wire,0", "invalid_timestamp", "Timestamp",
       "hour needs two digits"},
      {"2022/09/01 00:09,,A,2,B,10.00,Euro,10.00,Euro,Wire,0", "missing_field", "From Bank",
       "empty bank"},
      {"2022/09/01 00:09,1,,2,B,10.00,Euro,10.00,Euro,Wire,0", "empty_account", "Account",
       "originator account"},
      {"2022/09/01 00:09,1,A,,B,10.00,Euro,10.00,Euro,Wire,0", "missing_field", "To Bank",
       "empty bank"},
      {"2022/09/01 00:09,1,A,2,,10.00,Euro,10.00,Euro,Wire,0", "empty_account", "Account.1",
       "beneficiary account: the second Account column"},
      {"2022/09/01 00:09,1,A,2,B,12,5,Euro,10.00,Euro,Wire,0", "wrong_column_count", "",
       "a decimal comma splits the field"},
      {"2022/09/01 00:09,1,A,2,B,1e3,Euro,10.00,Euro,Wire,0", "invalid_amount", "Amount Received",
       "no exponents"},
      {"2022/09/01 00:09,1,A,2,B,10.00,Euro,,Euro,Wire,0", "missing_field", "Amount Paid",
       "empty amount"},
      {"2022/09/01 00:09,1,A,2,B,10.00,Euro, 10.00,Euro,Wire,0", "invalid_amount", "Amount Paid",
       "no padding"},
      {"2022/09/01 00:09,1,A,2,B,10.00,Euro,10.0000000001,Euro,Wire,0", "invalid_amount",
       "Amount Paid", "more than 9 decimals"},
      {"2022/09/01 00:09,1,A,2,B,10.00,Euro,99999999999999999999,Euro,Wire,0", "invalid_amount",
       "Amount Paid", "overflows 64 bits"},
      {"2022/09/01 00:09,1,A,2,B,-10.00,Euro,10.00,Euro,Wire,0", "negative_amount",
       "Amount Received", "negative"},
      {"2022/09/01 00:09,1,A,2,B,10.00,Euro,-10.00,Euro,Wire,0", "negative_amount", "Amount Paid",
       "negative"},
      {"2022/09/01 00:09,1,A,2,B,10.00,EUR,10.00,Euro,Wire,0", "unknown_currency",
       "Receiving Currency", "ISO codes are not AMLworld names"},
      {"2022/09/01 00:09,1,A,2,B,10.00,Euro,10.00,Zloty,Wire,0", "unknown_currency",
       "Payment Currency", "not an AMLworld currency"},
      {"2022/09/01 00:09,1,A,2,B,10.00,Euro,10.00,,Wire,0", "missing_field", "Payment Currency",
       "empty"},
      {"2022/09/01 00:09,1,A,2,B,10.00,Euro,10.00,Euro,Telex,0", "unknown_payment_format",
       "Payment Format", "not an AMLworld format"},
      {"2022/09/01 00:09,1,A,2,B,10.00,Euro,10.00,Euro,,0", "missing_field", "Payment Format",
       "empty"},
      {"2022/09/01 00:09,1,A,2,B,10.00,Euro,10.00,Euro,Wire,2", "invalid_label", "Is Laundering",
       "only 0 or 1"},
      {"2022/09/01 00:09,1,A,2,B,10.00,Euro,10.00,Euro,Wire,true", "invalid_label", "Is Laundering",
       "only 0 or 1"},
      {"2022/09/01 00:09,1,A,2,B,10.00,Euro,10.00,Euro,Wire,", "missing_field", "Is Laundering",
       "empty"},
      {"2022/09/01 00:09,1,A\"B,2,B,10.00,Euro,10.00,Euro,Wire,0", "malformed_record", "Account",
       "a quote inside an unquoted field"},
      {"2022/09/01 00:09,1,\"A\"B,2,B,10.00,Euro,10.00,Euro,Wire,0", "malformed_record", "Account",
       "text after the closing quote"},
      {"2022/09/01 00:09,1,A,2,B,10.00,Euro,10.00,Euro,\"Wire,0", "malformed_record",
       "Payment Format", "unterminated quote"},
      {"2022/09/01 00:09,1,A,2,B,10.00,Euro,10.00,Euro,Wire,0,Typology", "wrong_column_count", "",
       "12 columns"},
  };
  AmlworldCsvParser parser = SampleParser();
  for (const BadRow& c : kCases) {
    SCOPED_TRACE(::testing::Message() << c.row << " (" << c.why << ")");
    Transaction tx;
    RecordError error;
    ASSERT_FALSE(parser.Parse(c.row, 42, &tx, &error));
    EXPECT_EQ(error.reason, c.reason);
    EXPECT_EQ(error.field, c.field);
    EXPECT_EQ(error.line, 42);
    EXPECT_EQ(error.source, "HI-Small_Trans.sample.csv");
    EXPECT_FALSE(error.message.empty());
  }
}

TEST(AmlworldCsvParser, ErrorMessageIsPrecise) {
  AmlworldCsvParser parser = SampleParser();
  Transaction tx;
  RecordError error;
  ASSERT_FALSE(
      parser.Parse("2022/09/01 00:09,1,A,2,B,10.00,Euro,12;5,Euro,Wire,0", 17, &tx, &error));
  EXPECT_EQ(error.ToString(),
            "HI-Small_Trans.sample.csv:17: Amount Paid: amount '12;5' has invalid character ';' "
            "(expected digits and '.' as decimal mark)");
}

TEST(AmlworldCsvParser, ParserRecoversAfterARejectedRecord) {
  AmlworldCsvParser parser = SampleParser();
  Transaction tx;
  RecordError error;
  ASSERT_FALSE(parser.Parse("2022/09/01 00:09,1,\"A\"\"B,2", 2, &tx, &error));
  ASSERT_TRUE(
      parser.Parse("2022/09/01 00:09,1,A,2,B,10.00,Euro,10.00,Euro,Wire,0", 3, &tx, &error));
  EXPECT_EQ(tx.id, "HI-Small_Trans.sample.csv:3");
}

// The patterns file lists laundering attempts as blocks of CSV rows (same 11-column layout)
// between "BEGIN LAUNDERING ATTEMPT - <TYPOLOGY>" and "END LAUNDERING ATTEMPT - ..." lines.
TEST(AmlworldCsvParser, EveryPatternsFileRowParses) {
  AmlworldCsvOptions options;
  options.source_name = "HI-Small_Patterns.sample.txt";
  AmlworldCsvParser parser(options);
  const std::vector<std::string> lines =
      ReadLines(vigil::testing::TestDataPath("amlworld/HI-Small_Patterns.sample.txt"));
  ASSERT_EQ(lines.size(), 84u);
  std::string block;
  std::map<std::string, int> rows_per_block;
  int rows = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.rfind("BEGIN LAUNDERING ATTEMPT - ", 0) == 0) {
      block = line.substr(
          27, line.find(':') == std::string::npos ? std::string::npos : line.find(':') - 27);
      continue;
    }
    if (line.rfind("END LAUNDERING ATTEMPT", 0) == 0) {
      block.clear();
      continue;
    }
    if (line.empty()) continue;
    ASSERT_FALSE(block.empty()) << "row outside a block at line " << i + 1;
    Transaction tx;
    RecordError error;
    ASSERT_TRUE(parser.Parse(line, static_cast<int64_t>(i + 1), &tx, &error)) << error.ToString();
    EXPECT_TRUE(tx.label->is_laundering) << line;
    EXPECT_EQ(tx.id, "HI-Small_Patterns.sample.txt:" + std::to_string(i + 1));
    ++rows_per_block[block];
    ++rows;
  }
  EXPECT_EQ(rows, 63);
  // Counted from the file: rows between each BEGIN/END pair.
  const std::map<std::string, int> kExpected = {
      {"BIPARTITE", 6},       {"STACK", 12}, {"SCATTER-GATHER", 12}, {"FAN-OUT", 4},
      {"GATHER-SCATTER", 17}, {"CYCLE", 3},  {"RANDOM", 9}};
  EXPECT_EQ(rows_per_block, kExpected);
}

TEST(AmlworldCsvParser, ColumnNames) {
  EXPECT_EQ(AmlworldCsvParser::ColumnName(0), "Timestamp");
  EXPECT_EQ(AmlworldCsvParser::ColumnName(2), "Account");
  EXPECT_EQ(AmlworldCsvParser::ColumnName(4), "Account.1");
  EXPECT_EQ(AmlworldCsvParser::ColumnName(11), "Typology");
  EXPECT_EQ(AmlworldCsvParser::ColumnName(12), "");
}

}  // namespace
}  // namespace vigil
