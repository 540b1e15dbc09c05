#include "vigil/ingest/event_time_orderer.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;
using ::vigil::testing::IsOkAndHolds;
using ::vigil::testing::StatusIs;

struct TestRecord {
  int64_t event_time_us;
  int64_t sequence;
  std::string payload;

  friend bool operator==(const TestRecord&, const TestRecord&) = default;
  friend std::ostream& operator<<(std::ostream& os, const TestRecord& r) {
    return os << "{t=" << r.event_time_us << " seq=" << r.sequence << " size=" << r.payload.size()
              << "}";
  }
};

// Records with event times in [0, time_range) (small ranges give many equal times) and payloads
// of 0 to max_payload random bytes, NULs and newlines included. Sequence = position.
std::vector<TestRecord> RandomRecords(int n, int64_t time_range, int max_payload, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int64_t> time(0, time_range - 1);
  std::uniform_int_distribution<int> size(0, max_payload);
  std::uniform_int_distribution<int> byte(0, 255);
  std::vector<TestRecord> records;
  records.reserve(n);
  for (int i = 0; i < n; ++i) {
    std::string payload(size(rng), '\0');
    for (char& c : payload) c = static_cast<char>(byte(rng));
    records.push_back({time(rng), i, std::move(payload)});
  }
  return records;
}

// The reference order: std::stable_sort by event time alone.
std::vector<TestRecord> StableSorted(std::vector<TestRecord> records) {
  std::stable_sort(records.begin(), records.end(), [](const TestRecord& a, const TestRecord& b) {
    return a.event_time_us < b.event_time_us;
  });
  return records;
}

absl::Status AddAll(EventTimeOrderer& orderer, const std::vector<TestRecord>& records) {
  for (const TestRecord& r : records) {
    absl::Status status = orderer.Add(r.event_time_us, r.sequence, r.payload);
    if (!status.ok()) return status;
  }
  return orderer.Finish();
}

absl::StatusOr<std::vector<TestRecord>> Drain(EventTimeOrderer& orderer) {
  std::vector<TestRecord> out;
  EventTimeOrderer::Record record;  // reused on purpose, as callers are told to
  while (true) {
    absl::StatusOr<bool> more = orderer.Next(&record);
    if (!more.ok()) return more.status();
    if (!*more) return out;
    out.push_back({record.event_time_us, record.sequence, record.payload});
  }
}

class EventTimeOrdererTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "orderer_test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  EventTimeOrderer::Options Budget(size_t bytes) {
    EventTimeOrderer::Options options;
    options.memory_budget_bytes = bytes;
    options.temp_dir = dir_;
    return options;
  }

  // Everything under dir_, recursively (the orderer's spill directory and its runs).
  std::vector<std::string> TempEntries() const {
    std::vector<std::string> entries;
    for (const auto& entry : std::filesystem::recursive_directory_iterator(dir_)) {
      entries.push_back(entry.path().string());
    }
    return entries;
  }

  std::filesystem::path dir_;
};

TEST_F(EventTimeOrdererTest, InMemoryMatchesStableSort) {
  // 20k records over 500 distinct times: about 40 records share each time.
  const std::vector<TestRecord> records = RandomRecords(20'000, 500, 64, /*seed=*/1);
  EventTimeOrderer orderer(Budget(size_t{64} << 20));
  ASSERT_OK(AddAll(orderer, records));
  EXPECT_THAT(Drain(orderer), IsOkAndHolds(StableSorted(records)));
  EXPECT_EQ(orderer.stats().records, 20'000);
  EXPECT_EQ(orderer.stats().runs_spilled, 0);
  EXPECT_EQ(orderer.stats().bytes_spilled, 0);
  EXPECT_THAT(TempEntries(), IsEmpty());  // nothing touches the disk when the input fits
}

TEST_F(EventTimeOrdererTest, TinyBudgetSpillsManyRunsAndMatchesStableSort) {
  const std::vector<TestRecord> records = RandomRecords(20'000, 500, 64, /*seed=*/2);
  EventTimeOrderer orderer(Budget(size_t{24} << 10));
  ASSERT_OK(AddAll(orderer, records));
  EXPECT_GE(orderer.stats().runs_spilled, 40);  // about 80 runs of ~250 records
  EXPECT_EQ(orderer.stats().merge_passes, 0);   // 128-way merge: one pass
  EXPECT_THAT(Drain(orderer), IsOkAndHolds(StableSorted(records)));
  EXPECT_EQ(orderer.stats().records, 20'000);
  EXPECT_GT(orderer.stats().bytes_spilled, 20'000 * 20);  // at least the record headers
}

TEST_F(EventTimeOrdererTest, MoreRunsThanFanInMergeInPasses) {
  const std::vector<TestRecord> records = RandomRecords(20'000, 500, 64, /*seed=*/3);
  EventTimeOrderer::Options options = Budget(size_t{24} << 10);
  options.max_merge_fan_in = 4;
  EventTimeOrderer orderer(options);
  ASSERT_OK(AddAll(orderer, records));
  EXPECT_GT(orderer.stats().merge_passes, 10);
  EXPECT_THAT(Drain(orderer), IsOkAndHolds(StableSorted(records)));
}

TEST_F(EventTimeOrdererTest, EqualTimesKeepFileOrderAcrossRuns) {
  // Every record has the same time, so the output must be exactly the input order, even though
  // the records are spread over many runs.
  std::vector<TestRecord> records = RandomRecords(5'000, 1, 16, /*seed=*/4);
  for (size_t i = 0; i < records.size(); ++i) records[i].sequence = 10 + 3 * i;  // gaps allowed
  EventTimeOrderer orderer(Budget(size_t{16} << 10));
  ASSERT_OK(AddAll(orderer, records));
  EXPECT_GT(orderer.stats().runs_spilled, 5);
  EXPECT_THAT(Drain(orderer), IsOkAndHolds(records));
}

TEST_F(EventTimeOrdererTest, NegativeAndExtremeTimesOrder) {
  // Times before 1970 and at the int64 limits sort as signed numbers.
  const std::vector<TestRecord> records = {{INT64_MAX, 0, "max"},
                                           {-5, 1, "neg"},
                                           {0, 2, "zero"},
                                           {INT64_MIN, 3, "min"},
                                           {-5, 4, "neg2"}};
  for (size_t budget : {size_t{1} << 20, size_t{0}}) {  // 0: every record is its own run
    SCOPED_TRACE(budget);
    EventTimeOrderer orderer(Budget(budget));
    ASSERT_OK(AddAll(orderer, records));
    EXPECT_THAT(Drain(orderer), IsOkAndHolds(StableSorted(records)));
  }
}

TEST_F(EventTimeOrdererTest, EmptyInput) {
  EventTimeOrderer orderer(Budget(size_t{1} << 20));
  ASSERT_OK(orderer.Finish());
  EventTimeOrderer::Record record;
  EXPECT_THAT(orderer.Next(&record), IsOkAndHolds(false));
  EXPECT_THAT(orderer.Next(&record), IsOkAndHolds(false));  // and stays at the end
  EXPECT_EQ(orderer.stats().records, 0);
}

TEST_F(EventTimeOrdererTest, OneRecord) {
  EventTimeOrderer orderer(Budget(size_t{1} << 20));
  ASSERT_OK(orderer.Add(42, 7, "only"));
  ASSERT_OK(orderer.Finish());
  EXPECT_THAT(Drain(orderer), IsOkAndHolds(std::vector<TestRecord>{{42, 7, "only"}}));
  EventTimeOrderer::Record record;
  EXPECT_THAT(orderer.Next(&record), IsOkAndHolds(false));
}

// Payloads are opaque bytes: embedded NULs, newlines, CR, 0xFF, empty and large payloads come back
// byte for byte, whether ordered in memory or through spill files.
TEST_F(EventTimeOrdererTest, BinaryPayloadsRoundTripInMemoryAndSpilled) {
  using namespace std::string_literals;
  const std::vector<TestRecord> records = {
      {30, 0, "a\0b\0c"s},
      {10, 1, "line1\nline2\r\n"s},
      {20, 2, ""s},
      {10, 3, "\0"s},
      {20, 4, "\xff\xfe\n\0\n"s},
      {5, 5, std::string(200'000, '\0') + "tail"},  // larger than the whole tiny budget
      {10, 6, "\n"s},
  };
  for (size_t budget : {size_t{64} << 20, size_t{8} << 10}) {
    SCOPED_TRACE(budget);
    EventTimeOrderer orderer(Budget(budget));
    ASSERT_OK(AddAll(orderer, records));
    EXPECT_THAT(Drain(orderer), IsOkAndHolds(StableSorted(records)));
  }
}

TEST_F(EventTimeOrdererTest, SequenceMustIncrease) {
  EventTimeOrderer orderer(Budget(size_t{1} << 20));
  ASSERT_OK(orderer.Add(1, 5, "a"));
  EXPECT_THAT(orderer.Add(2, 5, "b"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("sequence 5")));
  EXPECT_THAT(orderer.Add(2, 4, "b"), StatusIs(absl::StatusCode::kInvalidArgument));
  // The rejected records were not added; the orderer goes on.
  ASSERT_OK(orderer.Add(0, 6, "c"));
  ASSERT_OK(orderer.Finish());
  EXPECT_THAT(Drain(orderer), IsOkAndHolds(std::vector<TestRecord>{{0, 6, "c"}, {1, 5, "a"}}));
}

TEST_F(EventTimeOrdererTest, CallsOutOfOrderAreFailedPrecondition) {
  EventTimeOrderer orderer(Budget(size_t{1} << 20));
  EventTimeOrderer::Record record;
  EXPECT_THAT(orderer.Next(&record), StatusIs(absl::StatusCode::kFailedPrecondition));
  ASSERT_OK(orderer.Finish());
  EXPECT_THAT(orderer.Add(1, 1, "late"), StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(orderer.Finish(), StatusIs(absl::StatusCode::kFailedPrecondition));
}

TEST_F(EventTimeOrdererTest, MissingTempDirIsAClearErrorThatSticks) {
  const std::filesystem::path missing = dir_ / "no" / "such" / "dir";
  EventTimeOrderer::Options options = Budget(size_t{8} << 10);
  options.temp_dir = missing;
  EventTimeOrderer orderer(options);
  const std::vector<TestRecord> records = RandomRecords(1'000, 100, 64, /*seed=*/5);
  const absl::Status status = AddAll(orderer, records);
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kNotFound,
                               AllOf(HasSubstr("create spill directory"),
                                     HasSubstr(missing.string()), HasSubstr("No such file"))));
  // Failed for good: every later call returns the same error.
  EXPECT_EQ(orderer.Add(1'000'000, 1'000'000, "x"), status);
  EXPECT_EQ(orderer.Finish(), status);
  EventTimeOrderer::Record record;
  EXPECT_EQ(orderer.Next(&record).status(), status);
}

TEST_F(EventTimeOrdererTest, TempDirThatIsAFileIsAClearError) {
  const std::filesystem::path file = dir_ / "plain_file";
  { std::ofstream(file) << "not a directory"; }
  EventTimeOrderer::Options options = Budget(size_t{8} << 10);
  options.temp_dir = file;
  EventTimeOrderer orderer(options);
  EXPECT_THAT(AddAll(orderer, RandomRecords(1'000, 100, 64, /*seed=*/6)),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("create spill directory"), HasSubstr(file.string()),
                             HasSubstr("Not a directory"))));
}

TEST_F(EventTimeOrdererTest, ReadOnlyTempDirIsPermissionDenied) {
  if (::geteuid() == 0) GTEST_SKIP() << "root ignores directory permissions";
  const std::filesystem::path read_only = dir_ / "read_only";
  std::filesystem::create_directory(read_only);
  std::filesystem::permissions(
      read_only, std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  EventTimeOrderer::Options options = Budget(size_t{8} << 10);
  options.temp_dir = read_only;
  EventTimeOrderer orderer(options);
  EXPECT_THAT(AddAll(orderer, RandomRecords(1'000, 100, 64, /*seed=*/7)),
              StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr(read_only.string())));
  std::filesystem::permissions(read_only, std::filesystem::perms::owner_all);
}

// Simulates a full disk with RLIMIT_FSIZE: a write past the limit fails with EFBIG (SIGXFSZ is
// ignored for the duration), the way a write to a full filesystem fails with ENOSPC.
TEST_F(EventTimeOrdererTest, WriteFailureNamesThePathAndRemovesTempFiles) {
  rlimit saved;
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &saved), 0);
  struct sigaction ignore = {}, saved_action = {};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGXFSZ, &ignore, &saved_action), 0);
  rlimit limited = saved;
  limited.rlim_cur = 16 << 10;  // any spill file past 16 KiB fails
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &limited), 0);

  absl::Status status;
  {
    EventTimeOrderer orderer(Budget(size_t{256} << 10));
    status = AddAll(orderer, RandomRecords(20'000, 1'000, 64, /*seed=*/8));
    // Cleaned up at the error already, not only on destruction.
    EXPECT_THAT(TempEntries(), IsEmpty());
  }
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &saved), 0);
  ASSERT_EQ(::sigaction(SIGXFSZ, &saved_action, nullptr), 0);

  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), AllOf(HasSubstr("EventTimeOrderer: write "),
                                      HasSubstr(dir_.string() + "/vigil-order-"),
                                      HasSubstr("/run-000000"), HasSubstr("File too large")));
}

TEST_F(EventTimeOrdererTest, TruncatedSpillFileIsDataLoss) {
  const std::vector<TestRecord> records = RandomRecords(20'000, 1'000, 64, /*seed=*/9);
  EventTimeOrderer orderer(Budget(size_t{256} << 10));
  ASSERT_OK(AddAll(orderer, records));
  ASSERT_GE(orderer.stats().runs_spilled, 2);
  // Cut the first run in half behind the orderer's back.
  std::filesystem::path run;
  for (const std::string& entry : TempEntries()) {
    if (entry.ends_with("/run-000000")) run = entry;
  }
  ASSERT_FALSE(run.empty());
  std::filesystem::resize_file(run, std::filesystem::file_size(run) / 2);

  const absl::StatusOr<std::vector<TestRecord>> out = Drain(orderer);
  EXPECT_THAT(out, StatusIs(absl::StatusCode::kDataLoss,
                            AllOf(HasSubstr(run.string()), HasSubstr("ends early"))));
  EXPECT_THAT(TempEntries(), IsEmpty());
}

TEST_F(EventTimeOrdererTest, TempFilesAreGoneWhenDrained) {
  const std::vector<TestRecord> records = RandomRecords(5'000, 100, 64, /*seed=*/10);
  EventTimeOrderer orderer(Budget(size_t{16} << 10));
  ASSERT_OK(AddAll(orderer, records));
  EXPECT_THAT(TempEntries(), Not(IsEmpty()));
  ASSERT_OK(Drain(orderer).status());
  EXPECT_THAT(TempEntries(), IsEmpty());  // before destruction: the disk is given back at the end
}

TEST_F(EventTimeOrdererTest, TempFilesAreGoneWhenDestroyedMidway) {
  const std::vector<TestRecord> records = RandomRecords(5'000, 100, 64, /*seed=*/11);
  {
    EventTimeOrderer orderer(Budget(size_t{16} << 10));
    ASSERT_OK(AddAll(orderer, records));
    EventTimeOrderer::Record record;
    for (int i = 0; i < 100; ++i) ASSERT_THAT(orderer.Next(&record), IsOkAndHolds(true));
  }
  EXPECT_THAT(TempEntries(), IsEmpty());
  {
    EventTimeOrderer orderer(Budget(size_t{16} << 10));
    for (int i = 0; i < 2'000; ++i) ASSERT_OK(orderer.Add(i % 7, i, records[i].payload));
    EXPECT_THAT(TempEntries(), Not(IsEmpty()));  // spilled, never finished
  }
  EXPECT_THAT(TempEntries(), IsEmpty());
}

}  // namespace
}  // namespace vigil
