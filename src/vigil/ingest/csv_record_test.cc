#include "vigil/ingest/csv_record.h"

#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::vigil::testing::StatusIs;

TEST(CsvRecordReader, ReadsQuotedFieldsAcrossLinesAndCountsLines) {
  std::istringstream in("a,b,c\r\n\"x,1\",\"say \"\"hi\"\"\",\n\"two\nlines\",,3\nlast");
  CsvRecordReader r(in, "rows.csv");
  ASSERT_OK_AND_ASSIGN(std::vector<std::string> f, r.Next());
  EXPECT_THAT(f, ElementsAre("a", "b", "c"));
  EXPECT_EQ(r.line(), 1);
  ASSERT_OK_AND_ASSIGN(f, r.Next());
  EXPECT_THAT(f, ElementsAre("x,1", "say \"hi\"", ""));
  ASSERT_OK_AND_ASSIGN(f, r.Next());
  EXPECT_THAT(f, ElementsAre("two\nlines", "", "3"));
  EXPECT_EQ(r.line(), 3);
  ASSERT_OK_AND_ASSIGN(f, r.Next());
  EXPECT_THAT(f, ElementsAre("last"));
  EXPECT_EQ(r.line(), 5);
  ASSERT_OK_AND_ASSIGN(f, r.Next());
  EXPECT_TRUE(f.empty());
}

TEST(CsvRecordReader, BadQuotingNamesTheLineAndColumn) {
  std::istringstream in("ok,1\nbad,x\"y\n");
  CsvRecordReader r(in, "rows.csv");
  ASSERT_OK(r.Next().status());
  EXPECT_THAT(r.Next(), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("rows.csv:2: column 2")));
}

}  // namespace
}  // namespace vigil
