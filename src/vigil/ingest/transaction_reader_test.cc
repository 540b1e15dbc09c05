#include "vigil/ingest/transaction_reader.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/numeric/int128.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/ingest/swift_mt_transaction.h"
#include "vigil/testing/status_matchers.h"
#include "vigil/testing/testdata.h"

namespace vigil {
namespace {

using ::testing::HasSubstr;
using ::vigil::testing::StatusIs;
using ::vigil::testing::TestDataPath;

const std::string kHeader =
    "Timestamp,From Bank,Account,To Bank,Account,Amount Received,Receiving Currency,"
    "Amount Paid,Payment Currency,Payment Format,Is Laundering";
const std::string kRow = "2022/09/01 00:09,1,A,2,B,10.00,Euro,10.00,Euro,Wire,0";

// A file under the test's temporary directory, removed at the end of the test.
class TempFile {
 public:
  explicit TempFile(const std::string& contents, const std::string& name = "input") {
    path_ = ::testing::TempDir() + name + "." + std::to_string(::getpid());
    std::ofstream(path_, std::ios::binary) << contents;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct Outcome {
  ReadResult result;
  int64_t line;
  std::string id_or_reason;  // transaction id, or the reject reason
  std::string raw;
};

// Reads everything, recording what each Next() returned.
std::vector<Outcome> ReadAll(TransactionReader& reader) {
  std::vector<Outcome> out;
  Transaction tx;
  RecordError error;
  for (;;) {
    absl::StatusOr<ReadResult> r = reader.Next(&tx, &error);
    EXPECT_OK(r);
    if (!r.ok() || *r == ReadResult::kEnd) break;
    out.push_back({*r, reader.line(), *r == ReadResult::kRecord ? tx.id : error.reason,
                   std::string(reader.raw_record())});
    if (*r == ReadResult::kRejected) {
      EXPECT_EQ(error.line, reader.line()) << error.ToString();
    }
  }
  return out;
}

std::vector<Outcome> ReadBuffer(const std::string& contents, ReaderOptions options = {}) {
  if (options.source_name.empty()) options.source_name = "f.csv";
  absl::StatusOr<std::unique_ptr<TransactionReader>> reader =
      OpenTransactionBuffer(contents, options);
  EXPECT_OK(reader);
  if (!reader.ok()) return {};
  return ReadAll(**reader);
}

// Sum of amounts in units of 1e-9 (Money::kMaxScale), exact.
absl::int128 Nanos(const Money& m) {
  absl::int128 v = m.units();
  for (int s = m.scale(); s < Money::kMaxScale; ++s) v *= 10;
  return v;
}

TEST(TransactionReader, ReadsEveryRowOfTheAmlworldSample) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<TransactionReader> reader,
                       OpenTransactionFile(TestDataPath("amlworld/HI-Small_Trans.sample.csv"), {}));
  Transaction tx;
  RecordError error;
  int records = 0, laundering = 0, settled = 0;
  std::map<std::string, absl::int128> paid;
  for (;;) {
    ASSERT_OK_AND_ASSIGN(ReadResult r, reader->Next(&tx, &error));
    if (r == ReadResult::kEnd) break;
    ASSERT_EQ(r, ReadResult::kRecord) << error.ToString();
    ++records;
    // Physical line: the header is line 1, so the n-th row is line n + 1.
    EXPECT_EQ(reader->line(), records + 1);
    EXPECT_EQ(tx.id, "HI-Small_Trans.sample.csv:" + std::to_string(records + 1));
    EXPECT_EQ(tx.priority, Priority::kP2);
    if (tx.label->is_laundering) ++laundering;
    if (tx.settled_amount) ++settled;
    paid[tx.amount.currency().code()] += Nanos(tx.amount);
  }
  EXPECT_EQ(records, 667);
  EXPECT_EQ(laundering, 27);
  EXPECT_EQ(settled, 9);  // rows whose received amount or currency differs from the paid one
  // Sum of "Amount Paid" per "Payment Currency", computed independently with exact decimals:
  //   /usr/bin/python3 -c "import csv,decimal,collections as c; s=c.defaultdict(decimal.Decimal);
  //     [s.__setitem__(r[8], s[r[8]] + decimal.Decimal(r[7])) for r in list(csv.reader(open(
  //     'testdata/amlworld/HI-Small_Trans.sample.csv', newline='')))[1:]];
  //     print(sorted(s.items()))"
  // (row counts per currency from the same script: USD 229, EUR 161, ... as noted).
  const std::map<std::string, std::string> kExpected = {
      {"AUD", "6609918.92"},      // Australian Dollar, 23 rows
      {"XBT", "5.933422"},        // Bitcoin, 14 rows
      {"BRL", "602394.18"},       // Brazil Real, 14 rows
      {"CAD", "103684.74"},       // Canadian Dollar, 16 rows
      {"EUR", "17012977.83"},     // Euro, 161 rows
      {"MXN", "5392049.37"},      // Mexican Peso, 15 rows
      {"RUB", "28832936.00"},     // Ruble, 22 rows
      {"INR", "632587105.75"},    // Rupee, 24 rows
      {"SAR", "74519.35"},        // Saudi Riyal, 8 rows
      {"ILS", "1535661.96"},      // Shekel, 37 rows
      {"CHF", "324320.30"},       // Swiss Franc, 29 rows
      {"GBP", "31062.10"},        // UK Pound, 15 rows
      {"USD", "88216990.62"},     // US Dollar, 229 rows
      {"JPY", "15681862192.43"},  // Yen, 30 rows
      {"CNY", "160264114.01"},    // Yuan, 30 rows
  };
  ASSERT_EQ(paid.size(), kExpected.size());
  for (const auto& [code, total] : kExpected) {
    ASSERT_OK_AND_ASSIGN(Money expected, Money::Parse(total, *Currency::FromCode(code)));
    EXPECT_EQ(paid[code], Nanos(expected)) << code;
  }
}

TEST(TransactionReader, SpecificSampleRowsFieldByField) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<TransactionReader> reader,
                       OpenTransactionFile(TestDataPath("amlworld/HI-Small_Trans.sample.csv"), {}));
  Transaction tx;
  RecordError error;
  std::map<int64_t, Transaction> rows;
  for (;;) {
    ASSERT_OK_AND_ASSIGN(ReadResult r, reader->Next(&tx, &error));
    if (r == ReadResult::kEnd) break;
    if (reader->line() == 131 || reader->line() == 668) rows[reader->line()] = tx;
  }
  // Line 131: 2022/09/01 10:50,003,800070010,003,800070010,6755724.66,Ruble,581552.90,Yuan,ACH,0
  const Transaction& a = rows.at(131);
  EXPECT_EQ(a.id, "HI-Small_Trans.sample.csv:131");
  EXPECT_EQ(FormatUtc(a.event_time), "2022-09-01T10:50:00.000000Z");
  EXPECT_EQ(a.originator, (Party{"800070010", "", "003", ""}));
  EXPECT_EQ(a.beneficiary, (Party{"800070010", "", "003", ""}));
  EXPECT_EQ(a.amount, Money(58155290, 2, *Currency::FromCode("CNY")));
  EXPECT_EQ(a.settled_amount, Money(675572466, 2, *Currency::FromCode("RUB")));
  EXPECT_EQ(a.payment_format, PaymentFormat::kAch);
  EXPECT_EQ(a.label, (Label{false, ""}));
  // Line 668 (last, no special ending):
  // ...,0046616,8112AEF40,1139.16,Shekel,1139.16,Shekel,Cheque,0
  const Transaction& b = rows.at(668);
  EXPECT_EQ(b.beneficiary.bank_id, "0046616");
  EXPECT_EQ(b.beneficiary.account_id, "8112AEF40");
  EXPECT_EQ(b.amount, Money(113916, 2, *Currency::FromCode("ILS")));
  EXPECT_FALSE(b.settled_amount.has_value());
  EXPECT_EQ(b.payment_format, PaymentFormat::kCheque);
}

TEST(TransactionReader, DetectFileFormat) {
  EXPECT_THAT(DetectFileFormat(TestDataPath("amlworld/HI-Small_Trans.sample.csv")),
              ::vigil::testing::IsOkAndHolds(FileFormat::kAmlworldCsv));
  EXPECT_THAT(DetectFileFormat(TestDataPath("json/mixed.jsonl")),
              ::vigil::testing::IsOkAndHolds(FileFormat::kJsonLines));
  EXPECT_THAT(DetectFileFormat(vigil::testing::SourceDir() + "/examples/transaction.json"),
              ::vigil::testing::IsOkAndHolds(FileFormat::kJsonLines));
  const TempFile bom_blank("\xEF\xBB\xBF\r\n\n" + kHeader + ",Typology\n", "bom");
  EXPECT_THAT(DetectFileFormat(bom_blank.path()),
              ::vigil::testing::IsOkAndHolds(FileFormat::kAmlworldCsv));
  const TempFile other("step,type,amount\n1,PAYMENT,9839.64\n", "other");
  EXPECT_THAT(DetectFileFormat(other.path()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("cannot detect the format")));
  const TempFile empty("\n\n", "empty");
  EXPECT_THAT(DetectFileFormat(empty.path()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("empty input")));
  EXPECT_THAT(DetectFileFormat("/nonexistent/vigil.csv"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("/nonexistent/vigil.csv")));
}

TEST(TransactionReader, OpenRejectsAWrongHeaderAsAWhole) {
  const TempFile file("Timestamp,From Bank,Account\n" + kRow + "\n", "badheader");
  EXPECT_THAT(OpenTransactionFile(file.path(), {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(":1: not an AMLworld CSV header: 3 columns")));
  EXPECT_THAT(OpenTransactionFile("/nonexistent/vigil.csv", {}),
              StatusIs(absl::StatusCode::kNotFound));
}

TEST(TransactionReader, SourceNameDefaultsToBaseNameAndCanBeSet) {
  const TempFile file(kHeader + "\n" + kRow + "\n", "named");
  Transaction tx;
  RecordError error;
  {
    ASSERT_OK_AND_ASSIGN(auto reader, OpenTransactionFile(file.path(), {}));
    ASSERT_THAT(reader->Next(&tx, &error), ::vigil::testing::IsOkAndHolds(ReadResult::kRecord));
    const std::string base = file.path().substr(file.path().find_last_of('/') + 1);
    EXPECT_EQ(tx.id, base + ":2");
  }
  ReaderOptions options;
  options.source_name = "2022-09-01";
  ASSERT_OK_AND_ASSIGN(auto reader, OpenTransactionFile(file.path(), options));
  ASSERT_THAT(reader->Next(&tx, &error), ::vigil::testing::IsOkAndHolds(ReadResult::kRecord));
  EXPECT_EQ(tx.id, "2022-09-01:2");
}

TEST(TransactionReader, CrlfBlankLinesAndNoFinalNewline) {
  const std::vector<Outcome> got =
      ReadBuffer(kHeader + "\r\n\r\n" + kRow + "\r\n   \t\r\n\n" + kRow + "\r\n" + kRow);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].id_or_reason, "f.csv:3");  // blank line 2 skipped, still counted
  EXPECT_EQ(got[0].raw, kRow);                // terminator stripped
  EXPECT_EQ(got[1].id_or_reason, "f.csv:6");
  EXPECT_EQ(got[2].id_or_reason, "f.csv:7");
  EXPECT_EQ(got[2].raw, kRow);
}

TEST(TransactionReader, RejectsBadRecordsAndGoesOn) {
  const std::vector<Outcome> got = ReadBuffer(kHeader + "\n" + kRow + "\n" +
                                              "2022/09/01 00:09,1,A,2,B,10.00,Euro,10.00,Lira,"
                                              "Wire,0\n" +
                                              "garbage\n" + kRow + "\n");
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0].result, ReadResult::kRecord);
  EXPECT_EQ(got[1].result, ReadResult::kRejected);
  EXPECT_EQ(got[1].id_or_reason, "unknown_currency");
  EXPECT_EQ(got[1].line, 3);
  EXPECT_EQ(got[2].id_or_reason, "wrong_column_count");
  EXPECT_EQ(got[2].raw, "garbage");
  EXPECT_EQ(got[3].id_or_reason, "f.csv:5");
}

TEST(TransactionReader, QuotedLineBreakKeepsTheRecordTogether) {
  const std::string multi =
      "2022/09/01 00:09,1,A,2,B,10.00,Euro,10.00,Euro,Wire,1,\"cycle\r\nsecond \"\"line\"\"\"";
  const std::vector<Outcome> got =
      ReadBuffer(kHeader + ",Typology\r\n" + multi + "\r\n" + kRow + ",\r\n");
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].result, ReadResult::kRecord);
  EXPECT_EQ(got[0].id_or_reason, "f.csv:2");
  EXPECT_EQ(got[0].raw, multi);
  EXPECT_EQ(got[1].id_or_reason, "f.csv:4");  // physical lines: the record used lines 2 and 3
}

TEST(TransactionReader, UnterminatedQuoteRejectsOnlyItsFirstLine) {
  const std::vector<Outcome> got = ReadBuffer(
      kHeader + "\n" + "2022/09/01 00:09,1,\"A,2,B,10.00,Euro,10.00,Euro,Wire,0\n" + kRow + "\n");
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].result, ReadResult::kRejected);
  EXPECT_EQ(got[0].id_or_reason, "malformed_record");
  EXPECT_EQ(got[0].line, 2);
  EXPECT_EQ(got[1].result, ReadResult::kRecord);
  EXPECT_EQ(got[1].id_or_reason, "f.csv:3");
}

TEST(TransactionReader, StrayQuoteDoesNotSwallowFollowingLines) {
  const std::vector<Outcome> got = ReadBuffer(
      kHeader + "\n" + "2022/09/01 00:09,1,A\"x,2,B,10.00,Euro,10.00,Euro,Wire,0\n" + kRow + "\n");
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].id_or_reason, "malformed_record");
  EXPECT_EQ(got[1].id_or_reason, "f.csv:3");
}

TEST(TransactionReader, OverlongRecordIsRejectedAndSkipped) {
  ReaderOptions options;
  options.max_record_bytes = 200;  // the header is 147 bytes
  const std::vector<Outcome> got =
      ReadBuffer(kHeader + "\n" + kRow + std::string(500, 'x') + "\n" + kRow + "\n", options);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].id_or_reason, "record_too_large");
  EXPECT_EQ(got[0].line, 2);
  EXPECT_EQ(got[1].id_or_reason, "f.csv:3");
}

TEST(TransactionReader, ParseRecordReparsesASpilledRawRecord) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<TransactionReader> reader,
                       OpenTransactionFile(TestDataPath("amlworld/HI-Small_Trans.sample.csv"), {}));
  Transaction tx, again;
  RecordError error;
  ASSERT_THAT(reader->Next(&tx, &error), ::vigil::testing::IsOkAndHolds(ReadResult::kRecord));
  ASSERT_THAT(reader->Next(&tx, &error), ::vigil::testing::IsOkAndHolds(ReadResult::kRecord));
  const std::string raw(reader->raw_record());
  const int64_t line = reader->line();
  EXPECT_EQ(raw,
            "2022/09/01 00:22,00220,8032DF2A0,00220,8032DF2A0,20132.03,US Dollar,20132.03,"
            "US Dollar,Reinvestment,0");
  EXPECT_EQ(line, 3);
  ASSERT_THAT(reader->Next(&again, &error), ::vigil::testing::IsOkAndHolds(ReadResult::kRecord));
  EXPECT_EQ(reader->ParseRecord(raw, line, &again, &error), ReadResult::kRecord);
  EXPECT_EQ(again, tx);
  EXPECT_EQ(reader->ParseRecord("x,y", 99, &again, &error), ReadResult::kRejected);
  EXPECT_EQ(error.line, 99);
  // The reader's own position is not affected.
  EXPECT_EQ(reader->line(), 4);
}

TEST(TransactionReader, JsonLinesFileWithEveryKindOfLine) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<TransactionReader> reader,
                       OpenTransactionFile(TestDataPath("json/mixed.jsonl"), {}));
  const std::vector<Outcome> got = ReadAll(*reader);
  ASSERT_EQ(got.size(), 5u);
  EXPECT_EQ(got[0].id_or_reason, "m-1");
  EXPECT_EQ(got[0].line, 1);
  EXPECT_EQ(got[1].id_or_reason, "unknown_field");  // line 2 is blank
  EXPECT_EQ(got[1].line, 3);
  EXPECT_EQ(got[2].id_or_reason, "m-3");  // pretty-printed, lines 4-10
  EXPECT_EQ(got[2].line, 4);
  EXPECT_EQ(got[2].raw.front(), '{');
  EXPECT_EQ(got[2].raw.back(), '}');
  EXPECT_EQ(got[3].id_or_reason, "invalid_json");  // truncated
  EXPECT_EQ(got[3].line, 11);
  EXPECT_EQ(got[4].id_or_reason, "m-5");
  EXPECT_EQ(got[4].line, 12);
}

TEST(TransactionReader, JsonLinesErrorsNameFileLineAndPath) {
  ReaderOptions options;
  options.source_name = "in.jsonl";
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<TransactionReader> reader,
                       OpenTransactionBuffer("\n{\"id\":\"x\",\"amount\":3}\n", options));
  Transaction tx;
  RecordError error;
  ASSERT_THAT(reader->Next(&tx, &error), ::vigil::testing::IsOkAndHolds(ReadResult::kRejected));
  EXPECT_EQ(error.ToString(), "in.jsonl:2: $.amount: expected an object, got a number");
  EXPECT_EQ(reader->ParseRecord(reader->raw_record(), 2, &tx, &error), ReadResult::kRejected);
  EXPECT_EQ(error.line, 2);
}

TEST(TransactionReader, JsonLinesDefaultPriorityAndMinorUnits) {
  const std::string line =
      R"({"id":"a","timestamp":"2022-09-01T00:00:00Z","originator":{"account_id":"A"},)"
      R"("beneficiary":{"account_id":"B"},"amount":{"value":"1.50","currency":"JPY"}})";
  ReaderOptions options;
  EXPECT_EQ(ReadBuffer(line, options).at(0).id_or_reason, "invalid_amount");
  options.enforce_iso_minor_units = false;
  options.default_priority = Priority::kP0;
  ASSERT_OK_AND_ASSIGN(auto reader, OpenTransactionBuffer(line, options));
  Transaction tx;
  RecordError error;
  ASSERT_THAT(reader->Next(&tx, &error), ::vigil::testing::IsOkAndHolds(ReadResult::kRecord));
  EXPECT_EQ(tx.priority, Priority::kP0);
}

TEST(TransactionReader, ReadsTheExampleFiles) {
  for (const char* name : {"transaction.json", "transactions.jsonl"}) {
    SCOPED_TRACE(name);
    ASSERT_OK_AND_ASSIGN(
        auto reader, OpenTransactionFile(vigil::testing::SourceDir() + "/examples/" + name, {}));
    const std::vector<Outcome> got = ReadAll(*reader);
    ASSERT_EQ(got.size(), std::string(name) == "transaction.json" ? 1u : 5u);
    for (const Outcome& o : got) EXPECT_EQ(o.result, ReadResult::kRecord) << o.id_or_reason;
  }
}

TEST(TransactionReader, EmptyBufferIsAnError) {
  EXPECT_THAT(OpenTransactionBuffer("", {}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("<buffer>: empty input")));
}

TEST(TransactionReader, HeaderOnlyFileHasNoRecords) {
  EXPECT_TRUE(ReadBuffer(kHeader + "\n").empty());
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A SWIFT MT file: messages on their own lines, glued on one line, between RJE "$" lines; a bad
// message and an unsupported one are rejected with their reasons and the line of their "{1:".
TEST(SwiftMtFileTest, ReadsEveryMessageAndRejectsTheBadOnes) {
  const std::string a = Slurp(TestDataPath("swift_mt/messages/mt103_0002.fin"));
  const std::string b = Slurp(TestDataPath("swift_mt/messages/mt103_0003.fin"));
  const std::string c = Slurp(TestDataPath("swift_mt/messages/mt202_0005.fin"));
  const std::string unsupported = Slurp(TestDataPath("swift_mt/messages/mt205_0001.fin"));
  const std::string bad = "{1:F01AAAABEBBAXXX0000000000}{2:I103BBBBDEFFXXXXN}{4:\n:20:X\n-}";
  const auto lines = [](const std::string& t) { return std::count(t.begin(), t.end(), '\n'); };
  const std::string file = "\n" + a + b + "\n$\n" + bad + "\n\n" + unsupported + "\n" + c;
  TempFile f(file, "messages.fin");
  ASSERT_THAT(DetectFileFormat(f.path()), ::vigil::testing::IsOkAndHolds(FileFormat::kSwiftMt));
  ReaderOptions options;
  options.default_priority = Priority::kP2;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<TransactionReader> reader,
                       OpenTransactionFile(f.path(), options));
  const std::vector<Outcome> out = ReadAll(*reader);
  ASSERT_EQ(out.size(), 5u);
  const int64_t b_line = 2 + lines(a);
  const int64_t bad_line = b_line + lines(b) + 2;
  const int64_t unsupported_line = bad_line + lines(bad) + 2;
  EXPECT_EQ(out[0].result, ReadResult::kRecord);
  EXPECT_EQ(out[0].line, 2);
  EXPECT_EQ(out[0].raw, a.substr(0, a.find_last_not_of("\r\n") + 1));
  EXPECT_EQ(out[1].result, ReadResult::kRecord);
  EXPECT_EQ(out[1].line, b_line);
  EXPECT_EQ(out[1].id_or_reason, "09797101-a670-4e81-98ed-34b409736402");
  EXPECT_EQ(out[2].result, ReadResult::kRejected);
  EXPECT_EQ(out[2].id_or_reason, "invalid_message");
  EXPECT_EQ(out[2].line, bad_line);
  EXPECT_EQ(out[3].result, ReadResult::kRejected);
  EXPECT_EQ(out[3].id_or_reason, "unsupported_message_type");
  EXPECT_EQ(out[3].line, unsupported_line);
  EXPECT_EQ(out[4].result, ReadResult::kRecord);

  // A record re-read from its raw text (replay's spill) is the same transaction, with the
  // file's priority for a normal-priority message.
  Transaction again;
  RecordError error;
  ASSERT_EQ(reader->ParseRecord(out[1].raw, out[1].line, &again, &error), ReadResult::kRecord);
  EXPECT_EQ(again.id, out[1].id_or_reason);
  EXPECT_EQ(again.priority, Priority::kP2);
  EXPECT_EQ(FileFormatName(FileFormat::kSwiftMt), "swift_mt");
}

// An RJE file with the ACKs interleaved, as SWIFT Alliance exports it: each message with its
// ACK in front (glued to it, or on the line before), "$" between them, glued or on lines of their
// own. The NAKed message is one refused record naming its error code, an ACK without a message
// another; the rest are read, with the ACK's reference. The ACK is fragments/mt103_0046.fin's,
// the messages the corpus's.
TEST(SwiftMtFileTest, ReadsAnRjeFileWithAcknowledgementsInterleaved) {
  const std::string acked = Slurp(TestDataPath("swift_mt/fragments/mt103_0046.fin"));
  const std::string ack = acked.substr(0, acked.find("{1:", 1));
  const std::string nak = absl::StrReplaceAll(ack, {{"{451:0}", "{451:1}{405:T27}"}});
  std::vector<std::string> m;
  for (const char* name : {"mt103_0071", "mt103_0072", "mt103_0073", "mt103_0074"}) {
    const std::string text = Slurp(TestDataPath(absl::StrCat("swift_mt/messages/", name, ".fin")));
    m.push_back(text.substr(0, text.find_last_not_of("\r\n") + 1));
  }
  const auto lines = [](const std::string& t) { return std::count(t.begin(), t.end(), '\n'); };
  const std::string file = "$\n" + ack + m[0] + "\n$\n" + nak + m[1] + "$" + ack + m[2] + "\n$\n" +
                           ack + "\n" + ack + "\n" + m[3] + "\n";
  TempFile f(file, "bulk.rje");
  const std::string name = f.path().substr(f.path().find_last_of('/') + 1);
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<TransactionReader> reader,
                       OpenTransactionFile(f.path(), {}));
  Transaction tx;
  RecordError error;
  std::vector<int64_t> at;
  std::vector<std::string> refused;
  for (const int i : {0, -1, 2, -1, 3}) {
    ASSERT_OK_AND_ASSIGN(const ReadResult r, reader->Next(&tx, &error));
    at.push_back(reader->line());
    if (i < 0) {
      ASSERT_EQ(r, ReadResult::kRejected);
      refused.push_back(absl::StrCat(error.ToString(), " [", error.reason, "]"));
      continue;
    }
    ASSERT_EQ(r, ReadResult::kRecord) << error.ToString();
    ASSERT_OK_AND_ASSIGN(const Transaction alone, ParseSwiftMt(m[i]));
    EXPECT_EQ(tx.id, alone.id);
    EXPECT_EQ(tx.ack_reference, "190325AAAALT2XAXXX0000000000");
    EXPECT_EQ(tx.ack_time, "2019-03-25T06:12:00.000000Z");
    if (i == 3) {
      EXPECT_EQ(reader->raw_record(), ack + "\n" + m[3]);
    }
  }
  EXPECT_THAT(reader->Next(&tx, &error), ::vigil::testing::IsOkAndHolds(ReadResult::kEnd));
  EXPECT_EQ(at[0], 2);
  EXPECT_EQ(at[1], 2 + lines(m[0]) + 2);
  EXPECT_EQ(at[2], at[1] + lines(m[1]));
  EXPECT_EQ(at[3], at[2] + lines(m[2]) + 2);
  EXPECT_EQ(at[4], at[3] + 1);
  EXPECT_THAT(refused, ::testing::ElementsAre(
                           absl::StrCat(name, ":", at[1],
                                        ": SWIFT MT block 4 (ACK), line 1: the network refused "
                                        "this MT103 \"INGDESMM\" (NAK {451:1}, error code "
                                        "\"T27\" in {405:}); a refused message is not read as a "
                                        "payment [invalid_message]"),
                           ::testing::StartsWith(absl::StrCat(
                               name, ":", at[3],
                               ": unsupported message type: an acknowledgement (service message "
                               "21, ACK) of session 0000, sequence 000000 of AAAALT2XAXXX"))));
}

// An ISO 20022 file: each transaction of the message is a record whose raw text is its JSON.
TEST(Iso20022FileTest, EachTransactionIsARecord) {
  const std::string path = TestDataPath("iso20022/messages/mx_pacs.008.001.08_0007.xml");
  ASSERT_THAT(DetectFileFormat(path), ::vigil::testing::IsOkAndHolds(FileFormat::kIso20022));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<TransactionReader> reader, OpenTransactionFile(path, {}));
  const std::vector<Outcome> out = ReadAll(*reader);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].result, ReadResult::kRecord);
  EXPECT_EQ(out[0].id_or_reason, "09797101-a670-4e81-98ed-34b409736402");
  Transaction again;
  RecordError error;
  ASSERT_EQ(reader->ParseRecord(out[0].raw, 1, &again, &error), ReadResult::kRecord)
      << error.ToString();
  EXPECT_EQ(again.id, out[0].id_or_reason);
  EXPECT_EQ(again.message_type, "pacs.008.001.08");

  ASSERT_OK_AND_ASSIGN(
      reader, OpenTransactionFile(TestDataPath("iso20022/messages/mx_pacs.002.001.10_0001.xml"), {}));
  const std::vector<Outcome> refused = ReadAll(*reader);
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0].id_or_reason, "unsupported_message_type");
  EXPECT_EQ(FileFormatName(FileFormat::kIso20022), "iso20022");
}

}  // namespace
}  // namespace vigil
