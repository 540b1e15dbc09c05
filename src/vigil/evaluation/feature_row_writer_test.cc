#include "vigil/evaluation/feature_row_writer.h"

#include <cmath>
#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"
#include "vigil/testing/files.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::evaluation {
namespace {

using ::vigil::testing::ReadFile;
using ::vigil::testing::StatusIs;


class FeatureRowWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = ::testing::TempDir() + "/rows_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".csv";
    schema_ = *FeatureSchema::Create("test.v1", {"a", "b", "c"});
    tx_.id = "id,with \"comma\"";
    tx_.event_time = FromUnixMicros(1'661'990'400'000'001);
    tx_.label = Label{true, "FAN-OUT"};
    tx_.originator.account_id = "A1";
    tx_.beneficiary.account_id = "B,2";
  }
  void TearDown() override { std::filesystem::remove(path_); }

  std::string path_;
  std::shared_ptr<const FeatureSchema> schema_;
  Transaction tx_;
};

TEST_F(FeatureRowWriterTest, WritesHeaderRowsQuotingAndEmptyNaN) {
  {
    ASSERT_OK_AND_ASSIGN(auto w, FeatureRowWriter::Create(path_, *schema_));
    const double values[] = {1.5, std::nan(""), 1e-7};
    ASSERT_OK(w->Append(tx_, values));
    tx_.label.reset();
    tx_.id = "plain";
    const double more[] = {0, -2, 12345678.25};
    ASSERT_OK(w->Append(tx_, more));
    ASSERT_OK(w->Sync());
    EXPECT_EQ(w->offset(), static_cast<int64_t>(ReadFile(path_).size()));
  }
  EXPECT_EQ(ReadFile(path_),
            "tx_id,timestamp,originator,beneficiary,a,b,c,label,typology\n"
            "\"id,with \"\"comma\"\"\",2022-09-01T00:00:00.000001Z,A1,\"B,2\",1.5,,1e-07,1,"
            "FAN-OUT\n"
            "plain,2022-09-01T00:00:00.000001Z,A1,\"B,2\",0,-2,12345678.25,,\n");
}

TEST_F(FeatureRowWriterTest, ResumeTruncatesToTheCheckpointOffset) {
  int64_t checkpoint = 0;
  {
    ASSERT_OK_AND_ASSIGN(auto w, FeatureRowWriter::Create(path_, *schema_));
    const double v[] = {1, 2, 3};
    ASSERT_OK(w->Append(tx_, v));
    ASSERT_OK(w->Sync());
    checkpoint = w->offset();
    ASSERT_OK(w->Append(tx_, v));  // written after the checkpoint: must disappear
  }
  const std::string before = ReadFile(path_);
  ASSERT_GT(before.size(), static_cast<size_t>(checkpoint));
  {
    ASSERT_OK_AND_ASSIGN(auto w, FeatureRowWriter::ResumeAt(path_, checkpoint));
    EXPECT_EQ(w->offset(), checkpoint);
  }
  EXPECT_EQ(ReadFile(path_), before.substr(0, static_cast<size_t>(checkpoint)));
  EXPECT_THAT(FeatureRowWriter::ResumeAt(path_, checkpoint + 1000),
              StatusIs(absl::StatusCode::kDataLoss));
  EXPECT_THAT(FeatureRowWriter::ResumeAt(path_ + ".missing", 0),
              StatusIs(absl::StatusCode::kUnavailable, ::testing::HasSubstr(".missing")));
}

}  // namespace
}  // namespace vigil::evaluation
