#include "vigil/ingest/internal/line_buffer.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::ingest_internal {
namespace {

using ::testing::ElementsAre;
using Extend = LineBuffer::Extend;

// Every line as read, with its line number, for several chunk sizes (tiny chunks force the
// compaction and growth paths).
std::vector<std::string> Lines(const std::string& data, size_t chunk, size_t max = 1 << 20) {
  LineBuffer buffer(NewStringSource(data), max, chunk);
  std::vector<std::string> out;
  for (;;) {
    absl::StatusOr<Extend> e = buffer.ExtendLine();
    EXPECT_OK(e);
    if (!e.ok() || *e == Extend::kEnd) break;
    out.push_back(std::to_string(buffer.record_line()) + ":" +
                  (*e == Extend::kTooLong ? "<too long>" : std::string(buffer.record())));
    buffer.Consume();
  }
  return out;
}

TEST(LineBuffer, SplitsLinesWithAnyChunkSize) {
  for (size_t chunk : {1, 2, 3, 7, 64, 1 << 20}) {
    SCOPED_TRACE(chunk);
    EXPECT_THAT(Lines("ab\r\n\ncd\nlast", chunk),
                ElementsAre("1:ab\r\n", "2:\n", "3:cd\n", "4:last"));
    EXPECT_THAT(Lines("x\n", chunk), ElementsAre("1:x\n"));
    EXPECT_THAT(Lines("", chunk), ElementsAre());
  }
}

TEST(LineBuffer, SkipsAUtf8ByteOrderMark) {
  EXPECT_THAT(Lines("\xEF\xBB\xBFhead\nrow\n", 64), ElementsAre("1:head\n", "2:row\n"));
  EXPECT_THAT(Lines("\xEF\xBB", 64), ElementsAre("1:\xEF\xBB"));  // too short to be one
}

TEST(LineBuffer, OverlongLineIsSkippedWhole) {
  const std::string long_line(1000, 'x');
  for (size_t chunk : {64, 4096}) {
    EXPECT_THAT(Lines("ok\n" + long_line + "\nafter\n" + long_line, chunk, 100),
                ElementsAre("1:ok\n", "2:<too long>", "3:after\n", "4:<too long>"));
  }
}

TEST(LineBuffer, MultiLineRecordsTruncateAndUnread) {
  LineBuffer buffer(NewStringSource("a\nb\nc\n"), 1 << 20, 64);
  ASSERT_THAT(buffer.ExtendLine(), ::vigil::testing::IsOkAndHolds(Extend::kLine));
  ASSERT_THAT(buffer.ExtendLine(), ::vigil::testing::IsOkAndHolds(Extend::kLine));
  EXPECT_EQ(buffer.record(), "a\nb\n");
  EXPECT_EQ(buffer.last_line(), "b\n");
  EXPECT_EQ(buffer.lines_in_record(), 2);
  buffer.TruncateToFirstLine();
  EXPECT_EQ(buffer.record(), "a\n");
  buffer.Consume();
  ASSERT_THAT(buffer.ExtendLine(), ::vigil::testing::IsOkAndHolds(Extend::kLine));
  EXPECT_EQ(buffer.record(), "b\n");  // read again after the truncation
  EXPECT_EQ(buffer.record_line(), 2);
  buffer.Unread();
  ASSERT_THAT(buffer.ExtendLine(), ::vigil::testing::IsOkAndHolds(Extend::kLine));
  EXPECT_EQ(buffer.record(), "b\n");
  EXPECT_EQ(buffer.record_line(), 2);
}

TEST(LineBuffer, DropLastLineReadsItAgainAsTheNextRecord) {
  LineBuffer buffer(NewStringSource("a\nb\nc\nd\n"), 1 << 20, 64);
  for (int i = 0; i < 3; ++i) {
    ASSERT_THAT(buffer.ExtendLine(), ::vigil::testing::IsOkAndHolds(Extend::kLine));
  }
  buffer.DropLastLine();
  EXPECT_EQ(buffer.record(), "a\nb\n");
  EXPECT_EQ(buffer.lines_in_record(), 2);
  buffer.Consume();
  ASSERT_THAT(buffer.ExtendLine(), ::vigil::testing::IsOkAndHolds(Extend::kLine));
  EXPECT_EQ(buffer.record(), "c\n");
  EXPECT_EQ(buffer.record_line(), 3);
  ASSERT_THAT(buffer.ExtendLine(), ::vigil::testing::IsOkAndHolds(Extend::kLine));
  buffer.DropLastLine();
  buffer.TruncateToFirstLine();  // one line: nothing to drop
  EXPECT_EQ(buffer.record(), "c\n");
}

TEST(LineBuffer, MultiLineRecordPastTheLimitLeavesTheRecordAlone) {
  LineBuffer buffer(NewStringSource("0123456789\n0123456789\n"), 15, 4);
  ASSERT_THAT(buffer.ExtendLine(), ::vigil::testing::IsOkAndHolds(Extend::kLine));
  ASSERT_THAT(buffer.ExtendLine(), ::vigil::testing::IsOkAndHolds(Extend::kTooLong));
  EXPECT_EQ(buffer.record(), "0123456789\n");
  buffer.Consume();
  ASSERT_THAT(buffer.ExtendLine(), ::vigil::testing::IsOkAndHolds(Extend::kLine));
  EXPECT_EQ(buffer.record(), "0123456789\n");
  EXPECT_EQ(buffer.record_line(), 2);
}

TEST(LineBuffer, OpenFileSourceReportsMissingFiles) {
  EXPECT_THAT(OpenFileSource("/nonexistent/x"),
              ::vigil::testing::StatusIs(absl::StatusCode::kNotFound));
}

}  // namespace
}  // namespace vigil::ingest_internal
