#include "vigil/evaluation/feature_row_reader.h"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/core/feature_schema.h"
#include "vigil/core/transaction.h"
#include "vigil/evaluation/feature_row_writer.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::evaluation {
namespace {

using ::testing::HasSubstr;
using ::vigil::testing::StatusIs;

std::string TempPath(const std::string& name) {
  return absl::StrCat(::testing::TempDir(), "/feature_row_reader_", getpid(), "_", name);
}

// What the writer writes, the reader reads back exactly: doubles bit for bit, missing values,
// ids that need quoting, rows with and without labels.
TEST(ReadFeatureRows, ReadsBackWhatTheWriterWrote) {
  const std::string path = TempPath("round_trip.csv");
  auto schema = FeatureSchema::Create("test.v1", {"a", "b", "c"});
  ASSERT_OK(schema);
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<FeatureRowWriter> w,
                         FeatureRowWriter::Create(path, **schema));
    Transaction tx;
    tx.id = "t,1 \"quoted\"\nline";
    tx.event_time = FromUnixMicros(1'661'990'400'123'456);
    tx.label = Label{true, "FAN-OUT"};
    tx.originator.account_id = "A1";
    tx.beneficiary.account_id = "B,2";
    ASSERT_OK(w->Append(tx, {0.1, std::nan(""), -1e300}));
    tx.id = "t2";
    tx.label.reset();
    ASSERT_OK(w->Append(tx, {1.0 / 3, 2, 0}));
    ASSERT_OK(w->Sync());
  }
  ASSERT_OK_AND_ASSIGN(FeatureRows rows, ReadFeatureRows(path));
  EXPECT_THAT(rows.names, ::testing::ElementsAre("a", "b", "c"));
  ASSERT_EQ(rows.rows(), 2u);
  EXPECT_EQ(rows.ids[0], "t,1 \"quoted\"\nline");
  EXPECT_EQ(rows.times[0], FromUnixMicros(1'661'990'400'123'456));
  EXPECT_EQ(rows.labels[0], 1);
  EXPECT_EQ(rows.typologies[0], "FAN-OUT");
  EXPECT_EQ(rows.originators[0], "A1");
  EXPECT_EQ(rows.beneficiaries[0], "B,2");
  EXPECT_EQ(rows.labels[1], -1);
  EXPECT_EQ(rows.values[0], 0.1);
  EXPECT_TRUE(std::isnan(rows.values[1]));
  EXPECT_EQ(rows.values[2], -1e300);
  EXPECT_EQ(rows.values[3], 1.0 / 3);
  std::filesystem::remove(path);
}

// A quoted line break is kept as written: an id holding "\r\n" comes back with it.
TEST(ReadFeatureRows, KeepsACarriageReturnInsideQuotes) {
  const std::string path = TempPath("crlf.csv");
  auto schema = FeatureSchema::Create("test.v1", {"a"});
  ASSERT_OK(schema);
  {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<FeatureRowWriter> w,
                         FeatureRowWriter::Create(path, **schema));
    Transaction tx;
    tx.id = "t\r\n1\r";
    tx.event_time = FromUnixMicros(1'661'990'400'000'000);
    ASSERT_OK(w->Append(tx, {1.0}));
    ASSERT_OK(w->Sync());
  }
  ASSERT_OK_AND_ASSIGN(FeatureRows rows, ReadFeatureRows(path));
  ASSERT_EQ(rows.rows(), 1u);
  EXPECT_EQ(rows.ids[0], "t\r\n1\r");
  std::filesystem::remove(path);
}

TEST(ReadFeatureRows, ReadsFilesWrittenBeforeThePartiesColumns) {
  const std::string path = TempPath("old.csv");
  std::ofstream(path) << "tx_id,timestamp,a,label,typology\nt1,2022-09-01T00:00:00Z,2.5,1,CYCLE\n";
  ASSERT_OK_AND_ASSIGN(FeatureRows rows, ReadFeatureRows(path));
  EXPECT_THAT(rows.names, ::testing::ElementsAre("a"));
  EXPECT_EQ(rows.values[0], 2.5);
  EXPECT_EQ(rows.originators[0], "");
  std::filesystem::remove(path);
}

TEST(ReadFeatureRows, RefusesWhatIsNotFeatureRowsNamingTheLineAndColumn) {
  const auto with = [](const std::string& name, const std::string& text) {
    const std::string path = TempPath(name);
    std::ofstream(path) << text;
    return ReadFeatureRows(path);
  };
  const std::string header = "tx_id,timestamp,a,b,label,typology\n";
  EXPECT_THAT(with("header.csv", "id,a,b\n"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(":1: not feature rows")));
  EXPECT_THAT(with("width.csv", header + "t1,2022-09-01T00:00:00Z,1,0,\n"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(":2: 5 columns")));
  EXPECT_THAT(with("number.csv", header + "t1,2022-09-01T00:00:00Z,1,x,0,\n"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(":2: b: 'x' is not a number")));
  EXPECT_THAT(with("label.csv", header + "t1,2022-09-01T00:00:00Z,1,2,yes,\n"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(":2: label: 'yes'")));
  EXPECT_THAT(with("time.csv", header + "t1,yesterday,1,2,1,\n"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(":2: timestamp")));
  EXPECT_THAT(with("quote.csv", header + "t1,2022-09-01T00:00:00Z,1,2\"x,1,\n"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("quote.csv:2: column 4: quote inside an unquoted field")));
  EXPECT_THAT(with("open.csv", header + "\"t1,2022-09-01T00:00:00Z,1,2,1,\n"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("open.csv:2: column 1: unterminated quoted field")));
  EXPECT_THAT(ReadFeatureRows(TempPath("absent.csv")), StatusIs(absl::StatusCode::kNotFound));
  for (const char* n : {"header.csv", "width.csv", "number.csv", "label.csv", "time.csv",
                        "quote.csv", "open.csv"}) {
    std::filesystem::remove(TempPath(n));
  }
}

}  // namespace
}  // namespace vigil::evaluation
