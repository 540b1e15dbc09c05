#include "vigil/common/csv_field.h"

#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "vigil/common/csv_record_reader.h"

namespace vigil {
namespace {

TEST(CsvFieldTest, QuotesWhatNeedsItAndReadsBackThroughTheReader) {
  EXPECT_EQ(CsvField("plain"), "plain");
  EXPECT_EQ(CsvField(""), "");
  EXPECT_EQ(CsvField("a,b"), "\"a,b\"");
  EXPECT_EQ(CsvField("say \"hi\""), "\"say \"\"hi\"\"\"");
  const std::vector<std::string> fields = {"a,b", "say \"hi\"", "two\nlines", "x"};
  std::string row;
  for (const std::string& f : fields) row += (row.empty() ? "" : ",") + CsvField(f);
  std::istringstream in(row + "\n");
  CsvRecordReader reader(in, "row.csv", kRfc4180CsvDialect);
  std::vector<std::string> back;
  ASSERT_TRUE(reader.Next(&back).ok());
  EXPECT_EQ(back, fields);
}

}  // namespace
}  // namespace vigil
