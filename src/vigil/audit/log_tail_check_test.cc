#include "vigil/audit/log_tail_check.h"

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/audit/audit_record.h"
#include "vigil/audit/testing_log.h"
#include "vigil/store/kv_store.h"
#include "vigil/testing/fake_clock.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::audit {
namespace {

using ::testing::HasSubstr;
using ::vigil::testing::StatusIs;

constexpr char kHeads[] = "audit_heads";

PendingRecord Record(int i) {
  AuditRecord r;
  r.transaction.id = absl::StrCat("tx-", i);
  r.decision.transaction_id = r.transaction.id;
  r.source = "test";
  r.input_sha256 = Digest(HashAlgorithm::kSha256, r.transaction.id);
  return {r.transaction.id, EncodeRecordBody(r)};
}

// A log of 250 records with heads every 100 (0, 100, 200) and 50 records after the newest, as
// a crash leaves it; reopened for writing after the check, as `vigil serve` does.
class LogTailCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = (std::filesystem::path(::testing::TempDir()) /
            absl::StrCat("log_tail_check_test_", getpid(), "_",
                         ::testing::UnitTest::GetInstance()->current_test_info()->name()))
               .string();
    std::filesystem::remove_all(dir_);
    clock_.Set(FromUnixMicros(1'764'500'000'000'000));
    signer_ = TestSigner();
    KvStoreOptions options;
    options.path = dir_;
    options.column_families = AuditColumnFamilies();
    options.sync_writes = false;
    ASSERT_OK_AND_ASSIGN(store_, KvStore::Open(options));
    Append(0, 250);
    ASSERT_OK(store_->Delete(kHeads, SequenceKey(250)));  // the crash: no head at close
  }
  void TearDown() override {
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  AuditLogOptions LogOptions() const {
    AuditLogOptions options;
    options.signer = signer_;
    options.tree_head_every_records = 100;
    options.tree_head_interval = std::chrono::hours(1);
    return options;
  }
  // Appends records [from, to) in groups of 10 and closes the log.
  void Append(int from, int to) {
    ASSERT_OK_AND_ASSIGN(std::unique_ptr<AuditLog> log,
                         AuditLog::Open(store_.get(), LogOptions(), clock_));
    for (int i = from; i < to; i += 10) {
      std::vector<PendingRecord> group;
      for (int k = i; k < std::min(to, i + 10); ++k) group.push_back(Record(k));
      ASSERT_OK(log->Append(std::move(group)).status());
    }
  }
  absl::Status Check() { return CheckAuditLogAtStart(store_.get(), *signer_, "DATA"); }
  TailCheckReport Report() {
    absl::StatusOr<std::unique_ptr<AuditLog>> log = AuditLog::OpenForReading(store_.get());
    EXPECT_TRUE(log.ok()) << log.status();
    absl::StatusOr<std::unique_ptr<LogVerifier>> key =
        LogVerifier::FromPem(signer_->PublicKeyPem(), "key");
    absl::StatusOr<TailCheckReport> report = CheckLogTail(**log, **key);
    EXPECT_TRUE(report.ok()) << report.status();
    return report.ok() ? *report : TailCheckReport{};
  }

  std::string dir_;
  ::vigil::testing::FakeClock clock_;
  std::shared_ptr<const LogSigner> signer_;
  std::unique_ptr<KvStore> store_;
};

TEST_F(LogTailCheckTest, AnIntactLogPassesAndTheNextCheckStartsWhereThisOneEnded) {
  TailCheckReport report = Report();
  EXPECT_TRUE(report.intact()) << report.damage->detail;
  EXPECT_EQ(report.records, 250u);
  EXPECT_EQ(report.tail_records, 50u);  // only the records after the newest head
  EXPECT_EQ(report.heads_checked, 3u);
  EXPECT_OK(Check());
  Append(250, 480);  // heads 300 and 400 (and 480 at close)
  report = Report();
  EXPECT_TRUE(report.intact()) << report.damage->detail;
  EXPECT_EQ(report.heads_checked, 4u);  // 200 (where the last check ended), 300, 400, 480
  EXPECT_EQ(report.tail_records, 0u);
  EXPECT_OK(Check());
}

TEST_F(LogTailCheckTest, AFreshStoreHasNothingToCheck) {
  store_.reset();
  std::filesystem::remove_all(dir_);
  KvStoreOptions options;
  options.path = dir_;
  options.column_families = AuditColumnFamilies();
  ASSERT_OK_AND_ASSIGN(store_, KvStore::Open(options));
  EXPECT_OK(Check());
}

TEST_F(LogTailCheckTest, DamageRefusesTheStartNamingTheKindAndTheWayOut) {
  // Every head removed.
  for (uint64_t size : {0, 100, 200}) ASSERT_OK(store_->Delete(kHeads, SequenceKey(size)));
  EXPECT_THAT(Check(), StatusIs(absl::StatusCode::kDataLoss,
                                HasSubstr("missing_head at sequence 0")));
  EXPECT_THAT(Check(), StatusIs(absl::StatusCode::kDataLoss,
                                HasSubstr("Run `vigil audit verify --data-dir DATA --pubkey")));
}

TEST_F(LogTailCheckTest, AHeadRemovedSinceTheLastCheckIsFound) {
  ASSERT_OK(Check());  // ends at head 200
  Append(250, 480);
  ASSERT_OK(store_->Delete(kHeads, SequenceKey(300)));
  EXPECT_THAT(Check(), StatusIs(absl::StatusCode::kDataLoss, HasSubstr("missing_head at sequence 200")));
}

TEST_F(LogTailCheckTest, TheHeadTheLastCheckEndedAtRemovedIsFound) {
  ASSERT_OK(Check());
  ASSERT_OK(store_->Delete(kHeads, SequenceKey(200)));
  EXPECT_THAT(Check(), StatusIs(absl::StatusCode::kDataLoss, HasSubstr("missing_head at sequence")));
}

TEST_F(LogTailCheckTest, TheTailRewrittenOrCutIsFound) {
  // A record after the newest head edited: the durable head's root disagrees.
  StoredRecords records(store_.get());
  const auto pristine = records.Snapshot();
  ASSERT_OK_AND_ASSIGN(std::string bytes, records.Read(230));
  bytes[bytes.size() - 1] ^= 1;
  ASSERT_OK(records.Replace(230, bytes));
  EXPECT_THAT(Check(), StatusIs(absl::StatusCode::kDataLoss, HasSubstr("modified at sequence 230")));
  ASSERT_OK(records.Restore(pristine));
  // Cut: the durable head says 250.
  ASSERT_OK(records.TruncateFrom(240));
  EXPECT_THAT(Check(), StatusIs(absl::StatusCode::kDataLoss, HasSubstr("truncated at sequence 240")));
  ASSERT_OK(records.Restore(pristine));
  EXPECT_OK(Check());
}

TEST_F(LogTailCheckTest, TheNewestHeadRemovedBeyondItsPromiseIsFound) {
  ASSERT_OK(store_->Delete(kHeads, SequenceKey(200)));  // 150 records after head 100
  EXPECT_THAT(Check(), StatusIs(absl::StatusCode::kDataLoss, HasSubstr("missing_head at sequence 100")));
}

}  // namespace
}  // namespace vigil::audit
