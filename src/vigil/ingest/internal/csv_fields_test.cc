#include "vigil/ingest/internal/csv_fields.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace vigil::ingest_internal {
namespace {

using ::testing::ElementsAre;

std::vector<std::string> Split(std::string_view record, int* count = nullptr) {
  std::string_view fields[16];
  std::string scratch;
  CsvSplitError error;
  const int n = SplitCsvRecord(record, fields, 16, &scratch, &error);
  if (count != nullptr) *count = n;
  if (n < 0) return {std::string("ERROR: ") + error.what + " @" + std::to_string(error.column)};
  return std::vector<std::string>(fields, fields + std::min(n, 16));
}

TEST(SplitCsvRecord, UnquotedFields) {
  EXPECT_THAT(Split("a,b,c"), ElementsAre("a", "b", "c"));
  EXPECT_THAT(Split(""), ElementsAre(""));
  EXPECT_THAT(Split(",,"), ElementsAre("", "", ""));
  EXPECT_THAT(Split("a b , c"), ElementsAre("a b ", " c"));  // spaces are data
  // Bytes next to a comma that differ from it by one bit pattern step ('-' is ',' + 1), at every
  // alignment of the 8-byte scan.
  for (int pad = 0; pad < 9; ++pad) {
    const std::string prefix(static_cast<size_t>(pad), 'x');
    EXPECT_THAT(Split(prefix + ",-5,+,-,--,#"), ElementsAre(prefix, "-5", "+", "-", "--", "#"));
  }
  EXPECT_THAT(Split("0123456,89abcdef,"), ElementsAre("0123456", "89abcdef", ""));
}

TEST(SplitCsvRecord, QuoteAnywhereTakesTheQuotedPath) {
  for (int pad = 0; pad < 17; ++pad) {
    const std::string prefix(static_cast<size_t>(pad), 'x');
    EXPECT_THAT(Split(prefix + ",\"q,1\",!"), ElementsAre(prefix, "q,1", "!"));
  }
}

TEST(SplitCsvRecord, QuotedFields) {
  EXPECT_THAT(Split("\"a\",b"), ElementsAre("a", "b"));
  EXPECT_THAT(Split("\"a,b\",c"), ElementsAre("a,b", "c"));
  EXPECT_THAT(Split("\"a\"\"b\",\"\"\"\""), ElementsAre("a\"b", "\""));
  EXPECT_THAT(Split("\"\",x"), ElementsAre("", "x"));
  EXPECT_THAT(Split("x,\"line\nbreak\""), ElementsAre("x", "line\nbreak"));
  EXPECT_THAT(Split("\"a\"\"1\",\"b\"\"2\""), ElementsAre("a\"1", "b\"2"));  // two unescaped
}

TEST(SplitCsvRecord, MalformedQuoting) {
  EXPECT_THAT(Split("a,\"b"), ElementsAre("ERROR: unterminated quoted field @1"));
  EXPECT_THAT(Split("\"a\"b,c"), ElementsAre("ERROR: unexpected character after closing quote @0"));
  EXPECT_THAT(Split("a,b\"c"), ElementsAre("ERROR: quote inside an unquoted field @1"));
}

TEST(SplitCsvRecord, CountsFieldsBeyondCapacity) {
  std::string_view fields[2];
  std::string scratch;
  CsvSplitError error;
  EXPECT_EQ(SplitCsvRecord("a,b,c,d", fields, 2, &scratch, &error), 4);
  EXPECT_EQ(fields[1], "b");
  EXPECT_EQ(SplitCsvRecord("\"a\",b,c", fields, 2, &scratch, &error), 3);
}

TEST(CsvQuoteState, TellsWhereARecordEnds) {
  CsvQuoteState q;
  EXPECT_TRUE(q.ScanLine("a,b,c"));
  EXPECT_TRUE(q.ScanLine("a,\"b\",c"));
  EXPECT_FALSE(q.ScanLine("a,\"b"));  // open quote: the line break is data
  EXPECT_FALSE(q.ScanLine("still \"\" inside"));
  EXPECT_TRUE(q.ScanLine("end\",c"));  // closed
  q.Reset();
  EXPECT_TRUE(q.ScanLine("a\"b,c"));        // a stray quote inside a field opens nothing
  EXPECT_FALSE(q.ScanLine("x,\"abc\"\""));  // ends with an escaped quote: still open
  EXPECT_TRUE(q.ScanLine("\""));
}

}  // namespace
}  // namespace vigil::ingest_internal
