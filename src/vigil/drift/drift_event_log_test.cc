#include "vigil/drift/drift_event_log.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/store/kv_store.h"
#include "vigil/testing/fake_clock.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::drift {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::vigil::testing::StatusIs;

using std::chrono::seconds;

// The stored key of an event id, written out independently of the code under test: 8 bytes,
// most significant first.
std::string KeyOf(uint64_t id) {
  std::string key;
  for (int shift = 56; shift >= 0; shift -= 8) key.push_back(static_cast<char>(id >> shift));
  return key;
}

std::vector<uint64_t> Ids(const std::vector<DriftEvent>& events) {
  std::vector<uint64_t> ids;
  for (const DriftEvent& e : events) ids.push_back(e.id);
  return ids;
}

std::vector<uint64_t> Range(uint64_t first, uint64_t last) {
  std::vector<uint64_t> ids;
  for (uint64_t id = first; id <= last; ++id) ids.push_back(id);
  return ids;
}

// Field by field in the failure message, through the event's JSON.
void ExpectSameEvent(const DriftEvent& a, const DriftEvent& b) {
  EXPECT_EQ(a, b) << DriftEventToJson(a) << "\n  vs " << DriftEventToJson(b);
}

void ExpectSameEvents(const std::vector<DriftEvent>& a, const std::vector<DriftEvent>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) ExpectSameEvent(a[i], b[i]);
}

class DriftEventLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = absl::StrCat(::testing::TempDir(), "/drift_event_log_",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override {
    log_.reset();
    store_.reset();
    std::filesystem::remove_all(dir_);
  }

  // (Re)opens the store (closing the log first: it points into the store) and the log.
  void Reopen(size_t keep_recent = 1000) {
    log_.reset();
    store_.reset();
    OpenStore({DriftEventLog::kColumnFamily});
    ASSERT_OK_AND_ASSIGN(log_, DriftEventLog::Open(store_.get(), clock_, keep_recent));
  }

  void OpenStore(std::vector<std::string> families) {
    KvStoreOptions options;
    options.path = dir_;
    options.column_families = std::move(families);
    options.block_cache_bytes = 0;
    ASSERT_OK_AND_ASSIGN(store_, KvStore::Open(options));
  }

  // Event n of a sequence: every member differs from event to event.
  DriftEvent Event(int n) {
    DriftEvent e;
    e.time = FromUnixMicros(1'796'014'810'000'000 + n * 1'000'001);
    e.kind = std::string(n % 2 == 0 ? kLevelChange : kFreeze);
    e.subject = absl::StrCat("feature_", n);
    e.window = n % 2 == 0 ? "short" : "";
    e.from = static_cast<DriftLevel>(n % 4);
    e.to = static_cast<DriftLevel>((n + 1) % 4);
    e.severity = 0.5 + n / 64.0;
    e.score = n * 0.1;
    e.detail = absl::StrCat("detail ", n);
    return e;
  }

  // Appends Event(1..n), the clock one second further for each; returns them as stored.
  std::vector<DriftEvent> AppendEvents(int n) {
    std::vector<DriftEvent> stored;
    for (int i = 1; i <= n; ++i) {
      clock_.Advance(seconds(1));
      absl::StatusOr<DriftEvent> e = log_->Append(Event(i));
      EXPECT_OK(e);
      if (e.ok()) stored.push_back(*e);
    }
    return stored;
  }

  std::string dir_;
  vigil::testing::FakeClock clock_;
  std::unique_ptr<KvStore> store_;
  std::unique_ptr<DriftEventLog> log_;
};

TEST_F(DriftEventLogTest, AssignsIdsOneTwoThreeAndRecordedAt) {
  Reopen();
  EXPECT_EQ(log_->last_id(), 0u);
  for (uint64_t want = 1; want <= 3; ++want) {
    clock_.Advance(seconds(7));
    DriftEvent in = Event(static_cast<int>(want));
    in.id = 99;                               // overwritten by Append
    in.recorded_at = FromUnixMicros(12'345);  // so is this
    ASSERT_OK_AND_ASSIGN(const DriftEvent out, log_->Append(in));
    EXPECT_EQ(out.id, want);
    EXPECT_EQ(out.recorded_at, clock_.Now());
    in.id = want;
    in.recorded_at = clock_.Now();
    ExpectSameEvent(out, in);  // nothing else changed
  }
  EXPECT_EQ(log_->last_id(), 3u);
  EXPECT_EQ(log_->appended(), 3u);
}

TEST_F(DriftEventLogTest, StoresTheIdAsBigEndianKeyAndTheJsonAsValue) {
  Reopen();
  const std::vector<DriftEvent> stored = AppendEvents(2);
  for (const DriftEvent& e : stored) {
    ASSERT_OK_AND_ASSIGN(const std::optional<std::string> value,
                         store_->Get(DriftEventLog::kColumnFamily, KeyOf(e.id)));
    ASSERT_TRUE(value.has_value()) << e.id;
    EXPECT_EQ(*value, DriftEventToJson(e));
  }
}

TEST_F(DriftEventLogTest, EventsSurviveReopen) {
  Reopen();
  const std::vector<DriftEvent> stored = AppendEvents(3);
  Reopen();
  EXPECT_EQ(log_->last_id(), 3u);
  EXPECT_EQ(log_->appended(), 0u);  // this object appended none
  ASSERT_OK_AND_ASSIGN(const std::vector<DriftEvent> read, log_->Read(1, 10));
  ExpectSameEvents(read, stored);
  ExpectSameEvents(log_->Recent(10), stored);
}

TEST_F(DriftEventLogTest, IdsContinueAfterReopen) {
  Reopen();
  AppendEvents(3);
  Reopen();
  ASSERT_OK_AND_ASSIGN(const DriftEvent fourth, log_->Append(Event(4)));
  EXPECT_EQ(fourth.id, 4u);
  EXPECT_EQ(log_->appended(), 1u);
  Reopen();
  EXPECT_EQ(log_->last_id(), 4u);
  ASSERT_OK_AND_ASSIGN(const std::vector<DriftEvent> read, log_->Read(0, 10));
  EXPECT_THAT(Ids(read), ElementsAre(1u, 2u, 3u, 4u));
  ExpectSameEvent(read.back(), fourth);
}

TEST_F(DriftEventLogTest, IdsPastOneByteStayInOrder) {
  // Stored directly: 255 and 256 sort correctly only with big-endian keys (little-endian 256
  // would sort first and the log would continue at 256, overwriting it).
  OpenStore({DriftEventLog::kColumnFamily});
  for (uint64_t id : {255, 256}) {
    DriftEvent e = Event(static_cast<int>(id));
    e.id = id;
    ASSERT_OK(store_->Put(DriftEventLog::kColumnFamily, KeyOf(id), DriftEventToJson(e)));
  }
  ASSERT_OK_AND_ASSIGN(log_, DriftEventLog::Open(store_.get(), clock_));
  EXPECT_EQ(log_->last_id(), 256u);
  EXPECT_THAT(Ids(log_->Recent(10)), ElementsAre(255u, 256u));
  ASSERT_OK_AND_ASSIGN(const DriftEvent next, log_->Append(Event(1)));
  EXPECT_EQ(next.id, 257u);
  ASSERT_OK_AND_ASSIGN(const std::vector<DriftEvent> read, log_->Read(0, 10));
  EXPECT_THAT(Ids(read), ElementsAre(255u, 256u, 257u));
}

TEST_F(DriftEventLogTest, RecentIsBoundedByKeepRecentAndOldestFirst) {
  Reopen(/*keep_recent=*/3);
  const std::vector<DriftEvent> stored = AppendEvents(5);
  EXPECT_THAT(Ids(log_->Recent(10)), ElementsAre(3u, 4u, 5u));
  EXPECT_THAT(Ids(log_->Recent(2)), ElementsAre(4u, 5u));
  EXPECT_THAT(log_->Recent(0), IsEmpty());
  ExpectSameEvent(log_->Recent(1).at(0), stored.back());

  // After a restart the newest keep_recent stored events are back in memory.
  Reopen(/*keep_recent=*/3);
  EXPECT_THAT(Ids(log_->Recent(10)), ElementsAre(3u, 4u, 5u));
  ExpectSameEvents(log_->Recent(3), {stored[2], stored[3], stored[4]});
  Reopen(/*keep_recent=*/10);
  EXPECT_THAT(Ids(log_->Recent(10)), ElementsAreArray(Range(1, 5)));
  Reopen(/*keep_recent=*/0);
  EXPECT_THAT(log_->Recent(10), IsEmpty());
  EXPECT_EQ(log_->last_id(), 5u);
}

TEST_F(DriftEventLogTest, ReadsFromAnIdAtMostMax) {
  Reopen(/*keep_recent=*/2);  // Read comes from the store, not from the two kept in memory
  const std::vector<DriftEvent> stored = AppendEvents(5);
  ASSERT_OK_AND_ASSIGN(std::vector<DriftEvent> read, log_->Read(2, 2));
  ExpectSameEvents(read, {stored[1], stored[2]});
  ASSERT_OK_AND_ASSIGN(read, log_->Read(0, 100));
  ExpectSameEvents(read, stored);
  ASSERT_OK_AND_ASSIGN(read, log_->Read(5, 10));
  EXPECT_THAT(Ids(read), ElementsAre(5u));
  ASSERT_OK_AND_ASSIGN(read, log_->Read(6, 10));
  EXPECT_THAT(read, IsEmpty());
  ASSERT_OK_AND_ASSIGN(read, log_->Read(1, 0));
  EXPECT_THAT(read, IsEmpty());
}

TEST_F(DriftEventLogTest, MemoryOnlyKeepsTheRecentEvents) {
  ASSERT_OK_AND_ASSIGN(log_, DriftEventLog::Open(nullptr, clock_, /*keep_recent=*/3));
  const std::vector<DriftEvent> stored = AppendEvents(5);
  EXPECT_THAT(Ids(stored), ElementsAre(1u, 2u, 3u, 4u, 5u));
  EXPECT_EQ(stored[4].recorded_at, clock_.Now());
  EXPECT_EQ(log_->last_id(), 5u);
  EXPECT_EQ(log_->appended(), 5u);
  ExpectSameEvents(log_->Recent(10), {stored[2], stored[3], stored[4]});
  // Read has only what memory kept.
  ASSERT_OK_AND_ASSIGN(std::vector<DriftEvent> read, log_->Read(1, 10));
  EXPECT_THAT(Ids(read), ElementsAre(3u, 4u, 5u));
  ASSERT_OK_AND_ASSIGN(read, log_->Read(4, 1));
  ExpectSameEvents(read, {stored[3]});
  ASSERT_OK_AND_ASSIGN(read, log_->Read(6, 10));
  EXPECT_THAT(read, IsEmpty());
  ASSERT_OK_AND_ASSIGN(read, log_->Read(0, 0));
  EXPECT_THAT(read, IsEmpty());
}

TEST_F(DriftEventLogTest, MemoryOnlyWithKeepRecentZeroStillNumbers) {
  ASSERT_OK_AND_ASSIGN(log_, DriftEventLog::Open(nullptr, clock_, /*keep_recent=*/0));
  EXPECT_THAT(Ids(AppendEvents(2)), ElementsAre(1u, 2u));
  EXPECT_THAT(log_->Recent(10), IsEmpty());
  ASSERT_OK_AND_ASSIGN(const std::vector<DriftEvent> read, log_->Read(0, 10));
  EXPECT_THAT(read, IsEmpty());
}

TEST_F(DriftEventLogTest, CorruptStoredValueIsDataLossNamingTheId) {
  Reopen();
  AppendEvents(3);
  ASSERT_OK(store_->Put(DriftEventLog::kColumnFamily, KeyOf(2), "{not json"));
  EXPECT_THAT(log_->Read(1, 10),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("stored event id 2 ")));
  ASSERT_OK_AND_ASSIGN(const std::vector<DriftEvent> after, log_->Read(3, 10));
  EXPECT_THAT(Ids(after), ElementsAre(3u));  // a read that does not reach it is unaffected

  log_.reset();
  EXPECT_THAT(DriftEventLog::Open(store_.get(), clock_),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("stored event id 2 ")));
  // Open parses only what it loads: with the corrupt event out of reach it opens, and ids go on.
  ASSERT_OK_AND_ASSIGN(log_, DriftEventLog::Open(store_.get(), clock_, /*keep_recent=*/1));
  EXPECT_EQ(log_->last_id(), 3u);
}

TEST_F(DriftEventLogTest, StoredEventUnderAnotherIdIsDataLoss) {
  Reopen();
  const std::vector<DriftEvent> stored = AppendEvents(2);
  ASSERT_OK(store_->Put(DriftEventLog::kColumnFamily, KeyOf(2), DriftEventToJson(stored[0])));
  EXPECT_THAT(log_->Read(0, 10),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("stored event id 2 holds id 1")));
}

TEST_F(DriftEventLogTest, KeyThatIsNotAnIdIsDataLoss) {
  OpenStore({DriftEventLog::kColumnFamily});
  ASSERT_OK(store_->Put(DriftEventLog::kColumnFamily, "abc", "{}"));
  EXPECT_THAT(DriftEventLog::Open(store_.get(), clock_),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("3 bytes is not an 8-byte")));
}

TEST_F(DriftEventLogTest, ColumnFamilyNotOpenIsAClearError) {
  OpenStore({"features"});
  EXPECT_THAT(DriftEventLog::Open(store_.get(), clock_),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("drift event log: column family 'drift_events' is not open"),
                             HasSubstr("KvStoreOptions::column_families"))));
}

TEST_F(DriftEventLogTest, ConcurrentAppendsGetDistinctIdsInStoreOrder) {
  Reopen(/*keep_recent=*/1000);
  constexpr int kThreads = 4;
  constexpr int kPerThread = 20;
  std::vector<std::thread> threads;
  std::vector<std::vector<uint64_t>> ids(kThreads);
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        absl::StatusOr<DriftEvent> e = log_->Append(Event(t * kPerThread + i));
        EXPECT_OK(e);
        if (e.ok()) ids[t].push_back(e->id);
        log_->Recent(5);  // readers run alongside appends
      }
    });
  }
  for (std::thread& th : threads) th.join();
  for (const std::vector<uint64_t>& mine : ids) {
    EXPECT_TRUE(std::is_sorted(mine.begin(), mine.end()));  // each thread's ids increase
  }
  constexpr uint64_t kTotal = kThreads * kPerThread;
  EXPECT_EQ(log_->last_id(), kTotal);
  EXPECT_EQ(log_->appended(), kTotal);
  ASSERT_OK_AND_ASSIGN(const std::vector<DriftEvent> read, log_->Read(0, 1000));
  EXPECT_THAT(Ids(read), ElementsAreArray(Range(1, kTotal)));
  EXPECT_THAT(Ids(log_->Recent(1000)), ElementsAreArray(Range(1, kTotal)));
}

}  // namespace
}  // namespace vigil::drift
