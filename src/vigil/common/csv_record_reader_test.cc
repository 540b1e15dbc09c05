#include "vigil/common/csv_record_reader.h"

#include <random>
#include <sstream>
#include <streambuf>
#include <string>
#include <string_view>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::vigil::testing::StatusIs;

using Records = std::vector<std::vector<std::string>>;

// Every record of "text" read from a string and, separately, from a stream: both must agree.
Records ReadAll(std::string_view text, CsvDialect dialect = {}) {
  Records from_string, from_stream;
  CsvRecordReader reader(text, "t.csv", dialect);
  std::istringstream in{std::string(text)};
  CsvRecordReader stream_reader(in, "t.csv", dialect);
  std::vector<std::string> fields;
  for (auto [r, out] :
       {std::pair{&reader, &from_string}, std::pair{&stream_reader, &from_stream}}) {
    while (true) {
      absl::StatusOr<bool> more = r->Next(&fields);
      EXPECT_TRUE(more.ok()) << more.status();
      if (!more.ok() || !*more) break;
      out->push_back(fields);
    }
  }
  EXPECT_EQ(from_string, from_stream);
  return from_string;
}

// The error of the first record that fails, or OK.
absl::Status FirstError(std::string_view text, CsvDialect dialect = {}) {
  CsvRecordReader reader(text, "t.csv", dialect);
  std::vector<std::string> fields;
  while (true) {
    absl::StatusOr<bool> more = reader.Next(&fields);
    if (!more.ok()) return more.status();
    if (!*more) return absl::OkStatus();
  }
}

// --- RFC 4180, the default dialect (feature rows) ---

TEST(CsvRecordReader, ReadsQuotedFieldsAcrossLinesAndCountsLines) {
  std::istringstream in("a,b,c\r\n\"x,1\",\"say \"\"hi\"\"\",\n\"two\nlines\",,3\nlast");
  CsvRecordReader r(in, "rows.csv");
  std::vector<std::string> f;
  ASSERT_OK_AND_ASSIGN(bool more, r.Next(&f));
  ASSERT_TRUE(more);
  EXPECT_THAT(f, ElementsAre("a", "b", "c"));
  EXPECT_EQ(r.line(), 1);
  ASSERT_OK_AND_ASSIGN(more, r.Next(&f));
  ASSERT_TRUE(more);
  EXPECT_THAT(f, ElementsAre("x,1", "say \"hi\"", ""));
  ASSERT_OK_AND_ASSIGN(more, r.Next(&f));
  ASSERT_TRUE(more);
  EXPECT_THAT(f, ElementsAre("two\nlines", "", "3"));
  EXPECT_EQ(r.line(), 3);
  ASSERT_OK_AND_ASSIGN(more, r.Next(&f));
  ASSERT_TRUE(more);
  EXPECT_THAT(f, ElementsAre("last"));
  EXPECT_EQ(r.line(), 5);
  ASSERT_OK_AND_ASSIGN(more, r.Next(&f));
  EXPECT_FALSE(more);
  EXPECT_TRUE(f.empty());
}

TEST(CsvRecordReader, BadQuotingNamesTheLineAndColumn) {
  std::istringstream in("ok,1\nbad,x\"y\n");
  CsvRecordReader r(in, "rows.csv");
  std::vector<std::string> f;
  ASSERT_OK(r.Next(&f).status());
  EXPECT_THAT(r.Next(&f),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("rows.csv:2: column 2")));
}

// Each case: the text, then the records expected, and why.
TEST(CsvRecordReader, RecordEndsAndLineBreaks) {
  EXPECT_THAT(ReadAll(""), IsEmpty());                        // no record at all
  EXPECT_EQ(ReadAll("a"), (Records{{"a"}}));                  // no final line break
  EXPECT_EQ(ReadAll("a\n"), (Records{{"a"}}));                // the break ends the record only
  EXPECT_EQ(ReadAll("a\r\nb\r\n"), (Records{{"a"}, {"b"}}));  // CRLF as LF
  EXPECT_EQ(ReadAll("a\r"), (Records{{"a"}}));                // a CR at the very end ends it too
  EXPECT_EQ(ReadAll("a\rb,c\n"), (Records{{"a\rb", "c"}}));   // a lone CR ends no line
  EXPECT_EQ(ReadAll(","), (Records{{"", ""}}));               // two empty fields
  EXPECT_EQ(ReadAll(" a , b "), (Records{{" a ", " b "}}));   // unquoted: spaces kept
  // Line breaks inside quotes are field text, as written: CRLF stays CRLF.
  EXPECT_EQ(ReadAll("\"x\r\ny\",\"\"\"\"\n"), (Records{{"x\r\ny", "\""}}));
  EXPECT_EQ(ReadAll("\"\"\n"), (Records{{""}}));  // a quoted empty field
}

TEST(CsvRecordReader, EndLeavesFieldsEmptyAndStays) {
  CsvRecordReader r("a,b\n", "t.csv");
  std::vector<std::string> f = {"stale"};
  ASSERT_OK_AND_ASSIGN(bool more, r.Next(&f));
  EXPECT_TRUE(more);
  EXPECT_THAT(f, ElementsAre("a", "b"));
  for (int i = 0; i < 2; ++i) {
    ASSERT_OK_AND_ASSIGN(more, r.Next(&f));
    EXPECT_FALSE(more);
    EXPECT_THAT(f, IsEmpty());
  }
}

TEST(CsvRecordReader, ReusedFieldsHoldOnlyTheNewRecord) {
  EXPECT_EQ(ReadAll("a,bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb,c\nd\ne,f\n"),
            (Records{{"a", "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", "c"}, {"d"}, {"e", "f"}}));
}

// --- Dialect options, each off (the default) and on ---

TEST(CsvDialect, SkipEmptyLines) {
  const std::string_view text = "a\n\n\r\nb\n";
  // Off: an empty line is a record of one empty field.
  EXPECT_EQ(ReadAll(text), (Records{{"a"}, {""}, {""}, {"b"}}));
  CsvDialect d;
  d.skip_empty_lines = true;
  EXPECT_EQ(ReadAll(text, d), (Records{{"a"}, {"b"}}));
  // Skipped lines still count: "b" is on line 4.
  CsvRecordReader r(text, "t.csv", d);
  std::vector<std::string> f;
  ASSERT_OK(r.Next(&f).status());
  ASSERT_OK(r.Next(&f).status());
  EXPECT_EQ(r.line(), 4);
  // A line of spaces is not empty.
  EXPECT_EQ(ReadAll(" \n", d), (Records{{" "}}));
}

TEST(CsvDialect, AllowSpaceAfterQuote) {
  const std::string_view text = "\"a\" \t,\"b\"  \n";
  EXPECT_THAT(FirstError(text),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "t.csv:1: column 1: unexpected character after closing quote"));
  CsvDialect d;
  d.allow_space_after_quote = true;
  EXPECT_EQ(ReadAll(text, d), (Records{{"a", "b"}}));
  // Only spaces and tabs.
  EXPECT_THAT(FirstError("\"a\" x\n", d), StatusIs(absl::StatusCode::kInvalidArgument,
                                                   HasSubstr("t.csv:1: column 1: unexpected")));
}

TEST(CsvDialect, DosEof) {
  const std::string_view text =
      "a\n\x1a"
      "b\n";
  // Off: 0x1A is text like any other byte.
  EXPECT_EQ(ReadAll(text), (Records{{"a"},
                                    {"\x1a"
                                     "b"}}));
  CsvDialect d;
  d.dos_eof = true;
  EXPECT_EQ(ReadAll(text, d), (Records{{"a"}}));
  // Only where a record would start.
  EXPECT_EQ(ReadAll("a\x1a,b\n", d), (Records{{"a\x1a", "b"}}));
}

TEST(CsvDialect, AllowBareQuotes) {
  const std::string_view text = "5\" PIPE,x\"\n";
  EXPECT_THAT(FirstError(text), StatusIs(absl::StatusCode::kInvalidArgument,
                                         "t.csv:1: column 1: quote inside an unquoted field"));
  CsvDialect d;
  d.allow_bare_quotes = true;
  EXPECT_EQ(ReadAll(text, d), (Records{{"5\" PIPE", "x\""}}));
}

// --- The list-file dialect (OFAC's legacy CSV, vigil's list CSV) ---

TEST(CsvRecordReader, ListFilesReadQuotesCommasLineBreaksAndTrailingSpaces) {
  const Records records =
      ReadAll("1,\"A, \"\"B\"\"\" ,-0- \r\n\n2,\"two\nlines\",\n\x1a", kListFileCsvDialect);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_THAT(records[0], ElementsAre("1", "A, \"B\"", "-0- "));
  EXPECT_THAT(records[1], ElementsAre("2", "two\nlines", ""));
}

TEST(CsvRecordReader, ListFilesCountLinesAndNameErrors) {
  CsvRecordReader reader("a\n\"x\ny\",b\n\"open", "t.csv", kListFileCsvDialect);
  std::vector<std::string> fields;
  ASSERT_TRUE(*reader.Next(&fields));
  EXPECT_EQ(reader.line(), 1);
  ASSERT_TRUE(*reader.Next(&fields));
  EXPECT_EQ(reader.line(), 2);
  EXPECT_THAT(reader.Next(&fields),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("t.csv:4: field 1: quoted field not terminated")));
  CsvRecordReader after_quote("\"a\"b,c", "t.csv", kListFileCsvDialect);
  EXPECT_THAT(after_quote.Next(&fields),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("t.csv:1: field 1: text after the closing quote")));
}

// --- Errors: whole messages, in both wordings ---

TEST(CsvRecordReader, ErrorsNameTheInputLineAndField) {
  CsvDialect fields;
  fields.error_wording = CsvDialect::ErrorWording::kField;
  struct Case {
    std::string_view text;
    std::string_view columns, fields;  // the message in each wording
  } cases[] = {
      // Unterminated: the line the quote opened on (3), not the record's first line (2).
      {"h\na,\"b\nc\",\"d\ne",  //
       "t.csv:3: column 3: unterminated quoted field",
       "t.csv:3: field 3: quoted field not terminated"},
      // Text after the closing quote: the line of the closing quote.
      {"\"a\nb\"c\n",  //
       "t.csv:2: column 1: unexpected character after closing quote",
       "t.csv:2: field 1: text after the closing quote"},
      // A quote inside an unquoted field: its own line, inside a record that began earlier.
      {"\"a\n\",b\"\n",  //
       "t.csv:2: column 2: quote inside an unquoted field",
       "t.csv:2: field 2: quote inside an unquoted field"},
  };
  for (const Case& c : cases) {
    EXPECT_THAT(FirstError(c.text), StatusIs(absl::StatusCode::kInvalidArgument, c.columns))
        << c.text;
    EXPECT_THAT(FirstError(c.text, fields), StatusIs(absl::StatusCode::kInvalidArgument, c.fields))
        << c.text;
  }
}

TEST(CsvRecordReader, AnErrorStays) {
  CsvRecordReader r("a\"\nb\n", "t.csv");
  std::vector<std::string> f;
  const absl::Status first = r.Next(&f).status();
  EXPECT_THAT(first, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_EQ(r.Next(&f).status(), first);
}

// --- Streams ---

// Records of every shape, long enough to cross many 64 KiB stream buffers at varied places
// (inside "", between "\r" and "\n", inside a quoted line break): a stream reads what a
// string does.
TEST(CsvRecordReader, StreamsReadWhatStringsDo) {
  std::mt19937 rng(1000);
  const std::vector<std::string> pieces = {"a",        "bc",         "\"q\"", "\"x,y\"", "\"\"\"\"",
                                           "\"l\nm\"", "\"r\r\ns\"", "",      "  ",      "1.5"};
  std::string text;
  while (text.size() < (1u << 20)) {
    const int n = 1 + static_cast<int>(rng() % 6);
    for (int i = 0; i < n; ++i) {
      if (i > 0) text += ',';
      text += pieces[rng() % pieces.size()];
    }
    text += rng() % 2 ? "\r\n" : "\n";
  }
  const Records records = ReadAll(text);  // compares stream and string
  EXPECT_GT(records.size(), 50000u);
  // A single record longer than the buffer.
  const std::string long_field(200000, 'z');
  EXPECT_EQ(ReadAll("\"" + long_field + "\"\"\",b\n"), (Records{{long_field + "\"", "b"}}));
  EXPECT_EQ(ReadAll(long_field + ",b\r\n"), (Records{{long_field, "b"}}));
}

// A stream buffer that fails after "good" bytes: the failure is an error, never a short file.
class FailingBuf : public std::streambuf {
 public:
  explicit FailingBuf(std::string good) : good_(std::move(good)) {
    setg(good_.data(), good_.data(), good_.data() + good_.size());
  }

 protected:
  int_type underflow() override { throw std::ios_base::failure("disk gone"); }

 private:
  std::string good_;
};

TEST(CsvRecordReader, AFailingStreamIsDataLoss) {
  FailingBuf buf("a,b\nc,");
  std::istream in(&buf);
  CsvRecordReader r(in, "rows.csv");
  std::vector<std::string> f;
  EXPECT_THAT(r.Next(&f), StatusIs(absl::StatusCode::kDataLoss, "rows.csv: read error"));
}

}  // namespace
}  // namespace vigil
