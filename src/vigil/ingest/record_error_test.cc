#include "vigil/ingest/record_error.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

using ::vigil::testing::StatusIs;

TEST(RecordError, ToStringNamesSourceLineFieldAndMessage) {
  RecordError e;
  e.source = "HI-Small.csv";
  e.line = 17;
  e.field = "Amount Paid";
  e.reason = "invalid_amount";
  e.message = "amount '12,5' has invalid character ','";
  EXPECT_EQ(e.ToString(), "HI-Small.csv:17: Amount Paid: amount '12,5' has invalid character ','");
}

TEST(RecordError, ToStringLeavesOutMissingParts) {
  RecordError e;
  e.source = "<request>";
  e.field = "$.amount.value";
  e.message = "bad";
  EXPECT_EQ(e.ToString(), "<request>: $.amount.value: bad");
  e.field.clear();
  EXPECT_EQ(e.ToString(), "<request>: bad");
}

TEST(RecordError, ToStatusIsInvalidArgumentWithReason) {
  RecordError e;
  e.source = "<request>";
  e.field = "$.id";
  e.reason = "missing_field";
  e.message = "required field 'id' is missing";
  EXPECT_THAT(e.ToStatus(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "<request>: $.id: required field 'id' is missing [missing_field]"));
}

TEST(RecordError, ClearResetsEverything) {
  RecordError e{"s", 3, "f", "r", "m", 7};
  e.Clear();
  EXPECT_EQ(e.source, "");
  EXPECT_EQ(e.line, 0);
  EXPECT_EQ(e.field, "");
  EXPECT_EQ(e.reason, "");
  EXPECT_EQ(e.message, "");
  EXPECT_EQ(e.byte_offset, -1);
}

}  // namespace
}  // namespace vigil
