#include "vigil/screening/list_csv.h"

#include <string>
#include <string_view>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::screening {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::vigil::testing::StatusIs;

std::vector<std::vector<std::string>> ReadAll(std::string_view text) {
  CsvRecordReader reader(text, "t.csv");
  std::vector<std::vector<std::string>> out;
  std::vector<std::string> fields;
  while (true) {
    absl::StatusOr<bool> more = reader.Next(&fields);
    EXPECT_TRUE(more.ok()) << more.status();
    if (!more.ok() || !*more) return out;
    out.push_back(fields);
  }
}

TEST(CsvRecordReaderTest, ReadsQuotesCommasLineBreaksAndTrailingSpaces) {
  const auto records = ReadAll("1,\"A, \"\"B\"\"\" ,-0- \r\n\n2,\"two\nlines\",\n\x1a");
  ASSERT_EQ(records.size(), 2u);
  EXPECT_THAT(records[0], ElementsAre("1", "A, \"B\"", "-0- "));
  EXPECT_THAT(records[1], ElementsAre("2", "two\nlines", ""));
}

TEST(CsvRecordReaderTest, CountsLinesAndNamesErrors) {
  CsvRecordReader reader("a\n\"x\ny\",b\n\"open", "t.csv");
  std::vector<std::string> fields;
  ASSERT_TRUE(*reader.Next(&fields));
  EXPECT_EQ(reader.line(), 1);
  ASSERT_TRUE(*reader.Next(&fields));
  EXPECT_EQ(reader.line(), 2);
  EXPECT_THAT(reader.Next(&fields),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("t.csv:4: field 1: quoted field not terminated")));
  CsvRecordReader after_quote("\"a\"b,c", "t.csv");
  EXPECT_THAT(after_quote.Next(&fields),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("t.csv:1: field 1: text after the closing quote")));
}

}  // namespace
}  // namespace vigil::screening
