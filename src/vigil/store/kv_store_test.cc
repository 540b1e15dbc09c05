#include "vigil/store/kv_store.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/store/kv_write_batch.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Optional;
using ::vigil::testing::IsOkAndHolds;
using ::vigil::testing::StatusIs;

// Each test gets a fresh directory under ::testing::TempDir(), removed afterwards.
class KvStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    root_ = std::filesystem::path(::testing::TempDir()) /
            absl::StrCat("vigil_kv_store_test_", getpid(), "_", info->name());
    std::filesystem::remove_all(root_);
    std::filesystem::create_directories(root_);
    path_ = (root_ / "db").string();
  }
  void TearDown() override { std::filesystem::remove_all(root_); }

  KvStoreOptions Options(std::vector<std::string> families = {"a", "b"}) const {
    KvStoreOptions options;
    options.path = path_;
    options.column_families = std::move(families);
    options.block_cache_bytes = size_t{1} << 20;
    return options;
  }

  std::unique_ptr<KvStore> OpenOrDie(const KvStoreOptions& options) {
    absl::StatusOr<std::unique_ptr<KvStore>> store = KvStore::Open(options);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? *std::move(store) : nullptr;
  }

  // Every key/value of "family", in order.
  static std::map<std::string, std::string> Dump(const KvStore& store, absl::string_view family) {
    std::map<std::string, std::string> out;
    const absl::Status s = store.ForEach(family, "", [&](absl::string_view k, absl::string_view v) {
      out.emplace(k, v);
      return absl::OkStatus();
    });
    EXPECT_TRUE(s.ok()) << s;
    return out;
  }

  std::filesystem::path root_;
  std::string path_;
};

// The memtables of all families together stay near write_buffer_bytes: beyond it the largest
// is flushed, although each family alone is far below its own 64 MiB.
TEST_F(KvStoreTest, TheMemtablesOfAllFamiliesShareOneBound) {
  const auto fill = [&](size_t bound) {
    KvStoreOptions options = Options({"a", "b", "c", "d"});
    options.write_buffer_bytes = bound;
    options.sync_writes = false;
    std::unique_ptr<KvStore> store = OpenOrDie(options);
    const std::string value(4096, 'v');
    for (int i = 0; i < 16384; ++i) {  // 64 MiB, 16 MiB in each family
      KvWriteBatch batch;
      batch.Put(std::string(1, static_cast<char>('a' + i % 4)), absl::StrCat("k", i), value);
      EXPECT_OK(store->Write(batch));
    }
    // Flushes run in the background: give them time to finish.
    uint64_t held = store->MemtableBytes();
    for (int i = 0; i < 500 && held > 3 * bound && bound > 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      held = store->MemtableBytes();
    }
    store.reset();
    std::filesystem::remove_all(path_);
    return held;
  };
  // A memtable is counted by the arena blocks it allocated, a few MiB even when nearly empty,
  // so the bound is checked with room for that.
  const uint64_t bounded = fill(size_t{8} << 20);
  EXPECT_LE(bounded, uint64_t{24} << 20);
  const uint64_t unbounded = fill(0);
  EXPECT_GE(unbounded, uint64_t{48} << 20);  // every family keeps its 16 MiB
}

TEST_F(KvStoreTest, PutGetDeleteRoundTrip) {
  auto store = OpenOrDie(Options());
  ASSERT_NE(store, nullptr);
  EXPECT_THAT(store->Get("a", "k"), IsOkAndHolds(std::nullopt));
  ASSERT_OK(store->Put("a", "k", "v1"));
  EXPECT_THAT(store->Get("a", "k"), IsOkAndHolds(Optional(std::string("v1"))));
  ASSERT_OK(store->Put("a", "k", "v2"));  // overwrite
  EXPECT_THAT(store->Get("a", "k"), IsOkAndHolds(Optional(std::string("v2"))));
  // Column families are separate keyspaces.
  EXPECT_THAT(store->Get("b", "k"), IsOkAndHolds(std::nullopt));
  EXPECT_THAT(store->Get("default", "k"), IsOkAndHolds(std::nullopt));
  ASSERT_OK(store->Delete("a", "k"));
  EXPECT_THAT(store->Get("a", "k"), IsOkAndHolds(std::nullopt));
  EXPECT_OK(store->Delete("a", "never-written"));  // deleting a missing key is fine
}

TEST_F(KvStoreTest, KeysAndValuesAreBinarySafe) {
  auto store = OpenOrDie(Options());
  ASSERT_NE(store, nullptr);
  const std::string key("k\0ey\xff", 5);
  const std::string value("\0\1\2\0", 4);
  ASSERT_OK(store->Put("default", key, value));
  EXPECT_THAT(store->Get("default", key), IsOkAndHolds(Optional(value)));
  EXPECT_THAT(store->Get("default", "k"), IsOkAndHolds(std::nullopt));  // not cut at '\0'
  ASSERT_OK(store->Put("default", "", "empty key"));
  EXPECT_THAT(store->Get("default", ""), IsOkAndHolds(Optional(std::string("empty key"))));
}

TEST_F(KvStoreTest, UnknownColumnFamilyIsInvalidArgumentNamingIt) {
  auto store = OpenOrDie(Options());
  ASSERT_NE(store, nullptr);
  const auto is_unknown = StatusIs(
      absl::StatusCode::kInvalidArgument,
      AllOf(HasSubstr(path_), HasSubstr("column family 'zz'"), HasSubstr("open: default, a, b")));
  EXPECT_THAT(store->Get("zz", "k"), is_unknown);
  EXPECT_THAT(store->Put("zz", "k", "v"), is_unknown);
  EXPECT_THAT(store->Delete("zz", "k"), is_unknown);
  EXPECT_THAT(store->ForEach("zz", "",
                             [](absl::string_view, absl::string_view) { return absl::OkStatus(); }),
              is_unknown);
  EXPECT_THAT(store->NewIterator("zz"), is_unknown);
}

TEST_F(KvStoreTest, WriteBatchAppliesAcrossColumnFamiliesInOrder) {
  auto store = OpenOrDie(Options());
  ASSERT_NE(store, nullptr);
  ASSERT_OK(store->Put("b", "old", "x"));
  KvWriteBatch batch;
  batch.Put("a", "k1", "v1");
  batch.Put("b", "k2", "v2");
  batch.Delete("b", "old");
  batch.Put("a", "k3", "first");
  batch.Delete("a", "k3");  // later operations win: k3 ends up absent
  batch.Put("default", "k4", "v4");
  EXPECT_EQ(batch.Count(), 6u);
  ASSERT_OK(store->Write(batch));
  EXPECT_THAT(Dump(*store, "a"),
              ElementsAre(std::pair<const std::string, std::string>("k1", "v1")));
  EXPECT_THAT(Dump(*store, "b"),
              ElementsAre(std::pair<const std::string, std::string>("k2", "v2")));
  EXPECT_THAT(store->Get("default", "k4"), IsOkAndHolds(Optional(std::string("v4"))));
}

TEST_F(KvStoreTest, WriteBatchWithAnUnknownFamilyAppliesNothing) {
  auto store = OpenOrDie(Options());
  ASSERT_NE(store, nullptr);
  KvWriteBatch batch;
  batch.Put("a", "k1", "v1");
  batch.Put("nope", "k2", "v2");  // the second operation names a family that is not open
  batch.Put("b", "k3", "v3");
  EXPECT_THAT(store->Write(batch),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("column family 'nope'")));
  EXPECT_TRUE(Dump(*store, "a").empty()) << "the first operation must not have been applied";
  EXPECT_TRUE(Dump(*store, "b").empty());
}

TEST_F(KvStoreTest, EmptyBatchIsOk) {
  auto store = OpenOrDie(Options());
  ASSERT_NE(store, nullptr);
  EXPECT_OK(store->Write(KvWriteBatch()));
}

TEST_F(KvStoreTest, SyncCanBeChosenPerWrite) {
  KvStoreOptions options = Options();
  options.sync_writes = false;
  auto store = OpenOrDie(options);
  ASSERT_NE(store, nullptr);
  KvWriteBatch batch;
  batch.Put("a", "k", "v");
  EXPECT_OK(store->Write(batch, {.sync = true}));
  EXPECT_OK(store->Put("a", "k2", "v", {.sync = false}));
  EXPECT_OK(store->Delete("a", "k2", {.sync = true}));
  EXPECT_THAT(store->Get("a", "k"), IsOkAndHolds(Optional(std::string("v"))));
}

TEST_F(KvStoreTest, ReopenPersistsData) {
  {
    auto store = OpenOrDie(Options());
    ASSERT_NE(store, nullptr);
    ASSERT_OK(store->Put("a", "in-log", "1"));  // only in the log and memtable
    ASSERT_OK(store->Put("b", "flushed", "2"));
    ASSERT_OK(store->Flush());  // now in table files
    ASSERT_OK(store->Put("a", "after-flush", "3"));
  }
  auto store = OpenOrDie(Options());
  ASSERT_NE(store, nullptr);
  EXPECT_THAT(store->Get("a", "in-log"), IsOkAndHolds(Optional(std::string("1"))));
  EXPECT_THAT(store->Get("b", "flushed"), IsOkAndHolds(Optional(std::string("2"))));
  EXPECT_THAT(store->Get("a", "after-flush"), IsOkAndHolds(Optional(std::string("3"))));
}

TEST_F(KvStoreTest, ReopenWithANewColumnFamilyKeepsTheOldOnes) {
  {
    auto store = OpenOrDie(Options({"a"}));
    ASSERT_NE(store, nullptr);
    ASSERT_OK(store->Put("a", "k", "v"));
  }
  {
    auto store = OpenOrDie(Options({"a", "c"}));
    ASSERT_NE(store, nullptr);
    EXPECT_THAT(store->ColumnFamilies(), ElementsAre("default", "a", "c"));
    EXPECT_THAT(store->Get("a", "k"), IsOkAndHolds(Optional(std::string("v"))));
    ASSERT_OK(store->Put("c", "k", "new"));
  }
  // Families on disk but not listed are opened anyway, with their data.
  auto store = OpenOrDie(Options({}));
  ASSERT_NE(store, nullptr);
  EXPECT_THAT(store->ColumnFamilies(), ElementsAre("default", "a", "c"));
  EXPECT_THAT(store->Get("c", "k"), IsOkAndHolds(Optional(std::string("new"))));
}

TEST_F(KvStoreTest, DuplicateFamilyNamesAreIgnoredAndEmptyOnesRejected) {
  auto store = OpenOrDie(Options({"a", "a", "default"}));
  ASSERT_NE(store, nullptr);
  EXPECT_THAT(store->ColumnFamilies(), ElementsAre("default", "a"));
  store.reset();
  EXPECT_THAT(KvStore::Open(Options({"a", ""})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("non-empty")));
}

TEST_F(KvStoreTest, CheckpointIsAConsistentOpenableCopy) {
  auto store = OpenOrDie(Options());
  ASSERT_NE(store, nullptr);
  ASSERT_OK(store->Put("a", "before", "1"));
  KvWriteBatch batch;
  batch.Put("a", "batched", "2");
  batch.Put("b", "batched", "3");
  ASSERT_OK(store->Write(batch));
  const std::string dir = (root_ / "checkpoint").string();
  ASSERT_OK(store->Checkpoint(dir));
  ASSERT_OK(store->Put("a", "after", "4"));  // not in the checkpoint

  KvStoreOptions copy_options = Options({});
  copy_options.path = dir;
  copy_options.create_if_missing = false;
  auto copy = OpenOrDie(copy_options);  // opens while the original is still open
  ASSERT_NE(copy, nullptr);
  EXPECT_THAT(copy->ColumnFamilies(), ElementsAre("default", "a", "b"));
  EXPECT_THAT(copy->Get("a", "before"), IsOkAndHolds(Optional(std::string("1"))));
  EXPECT_THAT(copy->Get("a", "batched"), IsOkAndHolds(Optional(std::string("2"))));
  EXPECT_THAT(copy->Get("b", "batched"), IsOkAndHolds(Optional(std::string("3"))));
  EXPECT_THAT(copy->Get("a", "after"), IsOkAndHolds(std::nullopt));
  // The copy is independent of the original.
  ASSERT_OK(copy->Put("a", "only-in-copy", "5"));
  EXPECT_THAT(store->Get("a", "only-in-copy"), IsOkAndHolds(std::nullopt));
}

TEST_F(KvStoreTest, CheckpointIntoAnExistingDirectoryFails) {
  auto store = OpenOrDie(Options());
  ASSERT_NE(store, nullptr);
  EXPECT_THAT(store->Checkpoint(root_.string()),
              StatusIs(absl::StatusCode::kAlreadyExists,
                       AllOf(HasSubstr(path_), HasSubstr("directory exists"))));
  EXPECT_THAT(store->Checkpoint(""), StatusIs(absl::StatusCode::kInvalidArgument));
  // A missing parent directory is an I/O error naming both paths.
  const std::string orphan = (root_ / "no" / "such" / "cp").string();
  const absl::Status orphan_status = store->Checkpoint(orphan);
  EXPECT_FALSE(orphan_status.ok());
  EXPECT_THAT(orphan_status.message(), AllOf(HasSubstr(path_), HasSubstr(orphan)));
}

TEST_F(KvStoreTest, OpenWhileOpenInThisProcessIsFailedPrecondition) {
  auto store = OpenOrDie(Options());
  ASSERT_NE(store, nullptr);
  EXPECT_THAT(KvStore::Open(Options()), StatusIs(absl::StatusCode::kFailedPrecondition,
                                                 AllOf(HasSubstr(path_), HasSubstr("open"),
                                                       HasSubstr("already open in this process"))));
  // The failed open must not disturb the first one.
  EXPECT_OK(store->Put("a", "k", "v"));
}

TEST_F(KvStoreTest, OpenLockedByAnotherProcessIsFailedPrecondition) {
  { ASSERT_NE(OpenOrDie(Options()), nullptr); }  // create the store, then close it
  const std::string lock_file = path_ + "/LOCK";
  int to_parent[2];
  int to_child[2];
  ASSERT_EQ(pipe(to_parent), 0);
  ASSERT_EQ(pipe(to_child), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    // Child: hold the LOCK file the way RocksDB does (a POSIX record lock) until told to stop.
    // Only async-signal-safe calls here.
    const int fd = open(lock_file.c_str(), O_RDWR);
    struct flock fl = {};
    fl.l_type = F_WRLCK;
    fl.l_whence = SEEK_SET;
    const char locked = (fd >= 0 && fcntl(fd, F_SETLK, &fl) == 0) ? 1 : 0;
    if (write(to_parent[1], &locked, 1) != 1) _exit(2);
    char c;
    if (read(to_child[0], &c, 1) != 1) _exit(3);
    _exit(0);
  }
  char locked = 0;
  ASSERT_EQ(read(to_parent[0], &locked, 1), 1);
  absl::StatusOr<std::unique_ptr<KvStore>> second = KvStore::Open(Options());
  ASSERT_EQ(write(to_child[1], "x", 1), 1);
  int wstatus = 0;
  ASSERT_EQ(waitpid(pid, &wstatus, 0), pid);
  for (int fd : {to_parent[0], to_parent[1], to_child[0], to_child[1]}) close(fd);
  ASSERT_EQ(locked, 1) << "the child could not take the lock";
  EXPECT_THAT(second, StatusIs(absl::StatusCode::kFailedPrecondition,
                               AllOf(HasSubstr(path_), HasSubstr("another process"))));
  // Once the other process is gone, the store opens.
  EXPECT_NE(OpenOrDie(Options()), nullptr);
}

TEST_F(KvStoreTest, MissingStoreWithoutCreateIsNotFound) {
  KvStoreOptions options = Options();
  options.create_if_missing = false;
  EXPECT_THAT(KvStore::Open(options),
              StatusIs(absl::StatusCode::kNotFound,
                       AllOf(HasSubstr(path_), HasSubstr("create_if_missing is false"))));
  EXPECT_FALSE(std::filesystem::exists(path_)) << "nothing may be created";
}

TEST_F(KvStoreTest, BadPathsAreErrorsNamingThePath) {
  EXPECT_THAT(KvStore::Open(KvStoreOptions()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("path is empty")));
  // A regular file where the directory should be.
  const std::string file = (root_ / "file").string();
  {
    std::FILE* f = std::fopen(file.c_str(), "w");
    ASSERT_NE(f, nullptr);
    std::fclose(f);
  }
  KvStoreOptions options = Options();
  options.path = file;
  const absl::StatusOr<std::unique_ptr<KvStore>> store = KvStore::Open(options);
  EXPECT_FALSE(store.ok());
  EXPECT_THAT(store.status().message(), AllOf(HasSubstr(file), HasSubstr("open")));
}

TEST_F(KvStoreTest, ForEachVisitsThePrefixInKeyOrder) {
  auto store = OpenOrDie(Options());
  ASSERT_NE(store, nullptr);
  for (const char* key : {"acct/2", "acct/10", "acct/1", "acct0", "acc", "b"}) {
    ASSERT_OK(store->Put("a", key, absl::StrCat("v:", key)));
  }
  const std::string ff_key("\xff\xff", 2);
  ASSERT_OK(store->Put("a", ff_key, "top"));
  std::vector<std::string> seen;
  ASSERT_OK(store->ForEach("a", "acct/", [&](absl::string_view k, absl::string_view v) {
    EXPECT_EQ(v, absl::StrCat("v:", k));
    seen.emplace_back(k);
    return absl::OkStatus();
  }));
  EXPECT_THAT(seen, ElementsAre("acct/1", "acct/10", "acct/2"));  // bytewise order
  // A prefix of 0xff bytes has no successor: the scan must still stop at the end.
  seen.clear();
  ASSERT_OK(store->ForEach("a", "\xff", [&](absl::string_view k, absl::string_view) {
    seen.emplace_back(k);
    return absl::OkStatus();
  }));
  EXPECT_THAT(seen, ElementsAre(ff_key));
  EXPECT_EQ(Dump(*store, "a").size(), 7u);  // the empty prefix visits everything
}

TEST_F(KvStoreTest, ForEachStopsAtTheFirstCallbackError) {
  auto store = OpenOrDie(Options());
  ASSERT_NE(store, nullptr);
  for (const char* key : {"k1", "k2", "k3"}) ASSERT_OK(store->Put("a", key, "v"));
  int calls = 0;
  EXPECT_THAT(store->ForEach("a", "k",
                             [&](absl::string_view k, absl::string_view) {
                               ++calls;
                               return k == "k2" ? absl::DataLossError("bad record k2")
                                                : absl::OkStatus();
                             }),
              StatusIs(absl::StatusCode::kDataLoss, "bad record k2"));
  EXPECT_EQ(calls, 2);
}

TEST_F(KvStoreTest, IteratorSeeksAndSeesAPointInTimeView) {
  auto store = OpenOrDie(Options());
  ASSERT_NE(store, nullptr);
  for (const char* key : {"1", "3", "5"}) ASSERT_OK(store->Put("b", key, key));
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<KvIterator> it, store->NewIterator("b"));
  ASSERT_OK(store->Put("b", "4", "4"));  // after the iterator: not in its view
  std::vector<std::string> keys;
  for (it->Seek("2"); it->Valid(); it->Next()) {
    keys.emplace_back(it->key());
    EXPECT_EQ(it->value(), it->key());
  }
  EXPECT_OK(it->status());
  EXPECT_THAT(keys, ElementsAre("3", "5"));
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "1");
  it->Seek("6");
  EXPECT_FALSE(it->Valid());
  EXPECT_OK(it->status());
  it->SeekToLast();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "5");
  it->SeekForPrev("4");  // "4" came after the view
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "3");
  it->SeekForPrev("5");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), "5");
  it->SeekForPrev("0");
  EXPECT_FALSE(it->Valid());
  EXPECT_OK(it->status());
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<KvIterator> empty, store->NewIterator("a"));
  empty->SeekToLast();
  EXPECT_FALSE(empty->Valid());
  empty->SeekForPrev("z");
  EXPECT_FALSE(empty->Valid());
}

TEST_F(KvStoreTest, ConcurrentWritersAndReaders) {
  KvStoreOptions options = Options();
  options.sync_writes = false;  // the test is about thread safety, not durability
  auto store = OpenOrDie(options);
  ASSERT_NE(store, nullptr);
  constexpr int kThreads = 4;
  constexpr int kKeysPerThread = 300;
  std::atomic<bool> failed{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kKeysPerThread; ++i) {
        // std::to_string, not absl::StrCat: Debian's Abseil is not TSan-instrumented.
        const std::string key = "t" + std::to_string(t) + "/" + std::to_string(i);
        KvWriteBatch batch;  // the pair in "a" and "b" commits together
        batch.Put("a", key, "x");
        batch.Put("b", key, "y");
        if (!store->Write(batch).ok()) failed = true;
        // A reader in another thread of the same store: its own just-written key is visible.
        absl::StatusOr<std::optional<std::string>> v = store->Get("b", key);
        if (!v.ok() || *v != std::optional<std::string>("y")) failed = true;
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_FALSE(failed);
  EXPECT_EQ(Dump(*store, "a").size(), size_t{kThreads * kKeysPerThread});
  EXPECT_EQ(Dump(*store, "b").size(), size_t{kThreads * kKeysPerThread});
}

TEST_F(KvStoreTest, InjectedSyncFailuresFailSyncedWritesAndStopTheStore) {
  KvStoreOptions options = Options();
  auto faults = std::make_shared<KvFaults>();
  options.faults = faults;
  auto store = OpenOrDie(options);
  ASSERT_NE(store, nullptr);
  ASSERT_OK(store->Put("a", "before", "1"));
  EXPECT_GT(faults->syncs(), 0u);
  faults->set_fail_syncs(true);
  const absl::Status failed = store->Put("a", "during", "2");
  EXPECT_FALSE(failed.ok());
  EXPECT_THAT(failed.message(), HasSubstr("injected sync failure"));
  EXPECT_GT(faults->failed(), 0u);
  // Like a real disk error, RocksDB keeps refusing writes until the store is reopened.
  faults->set_fail_syncs(false);
  EXPECT_FALSE(store->Put("a", "after", "3").ok());
  store.reset();
  store = OpenOrDie(Options());
  ASSERT_NE(store, nullptr);
  EXPECT_THAT(store->Get("a", "before"), IsOkAndHolds(Optional(std::string("1"))));
  EXPECT_THAT(store->Get("a", "after"), IsOkAndHolds(std::optional<std::string>()));
}

TEST_F(KvStoreTest, InjectedWriteFailuresFailWrites) {
  KvStoreOptions options = Options();
  options.sync_writes = false;
  auto faults = std::make_shared<KvFaults>();
  options.faults = faults;
  auto store = OpenOrDie(options);
  ASSERT_NE(store, nullptr);
  faults->set_fail_writes(true);
  EXPECT_FALSE(store->Put("a", "k", "v").ok());
  EXPECT_GT(faults->failed(), 0u);
}

TEST_F(KvStoreTest, AFollowerReadsTheStoreOfARunningOwnerAndWritesNothing) {
  auto owner = OpenOrDie(Options());
  ASSERT_NE(owner, nullptr);
  ASSERT_OK(owner->Put("a", "k1", "v1"));
  KvWriteBatch batch;  // in the owner's write-ahead log only, not yet in a table file
  batch.Put("b", "k2", "v2");
  ASSERT_OK(owner->Write(batch));
  EXPECT_THAT(KvStore::Open(Options()), StatusIs(absl::StatusCode::kFailedPrecondition));

  const std::string follower_dir = (root_ / "follower").string();
  std::filesystem::create_directories(follower_dir);
  KvStoreOptions options = Options({});
  options.create_if_missing = false;
  options.follower_dir = follower_dir;
  auto follower = OpenOrDie(options);
  ASSERT_NE(follower, nullptr);
  EXPECT_THAT(follower->Get("a", "k1"), IsOkAndHolds(Optional(std::string("v1"))));
  EXPECT_THAT(follower->Get("b", "k2"), IsOkAndHolds(Optional(std::string("v2"))));
  EXPECT_FALSE(follower->Put("a", "k3", "v3").ok());
  // A point in time: what the owner writes afterwards is not seen.
  ASSERT_OK(owner->Put("a", "k4", "v4"));
  EXPECT_THAT(follower->Get("a", "k4"), IsOkAndHolds(std::optional<std::string>()));
  follower.reset();
  owner.reset();
  options.path = (root_ / "nothing").string();
  EXPECT_THAT(KvStore::Open(options), StatusIs(absl::StatusCode::kNotFound));
}

}  // namespace
}  // namespace vigil
