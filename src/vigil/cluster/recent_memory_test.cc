#include "vigil/cluster/recent_memory.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/store/kv_store.h"
#include "vigil/testing/files.h"
#include "vigil/testing/status_matchers.h"

namespace vigil::cluster {
namespace {

constexpr char kFamily[] = "cluster";

std::unique_ptr<KvStore> OpenStore(const std::string& dir) {
  KvStoreOptions options;
  options.path = dir;
  options.column_families = {kFamily};
  options.sync_writes = false;
  absl::StatusOr<std::unique_ptr<KvStore>> store = KvStore::Open(options);
  return store.ok() ? std::move(*store) : nullptr;
}

int StoredEntries(const KvStore& store) {
  int n = 0;
  EXPECT_OK(store.ForEach(kFamily, "m/", [&](absl::string_view, absl::string_view) {
    ++n;
    return absl::OkStatus();
  }));
  return n;
}

void Save(RecentMemory& memory, KvStore& store) {
  KvWriteBatch batch;
  memory.SaveInto(batch, kFamily, "m/");
  ASSERT_OK(store.Write(batch));
}

TEST(RecentMemoryTest, KeepsTheLatestEntriesAndAnInsertOfAHeldKeyChangesNothing) {
  RecentMemory memory(3);
  EXPECT_TRUE(memory.Insert("a", "1"));
  EXPECT_FALSE(memory.Insert("a", "2"));
  EXPECT_EQ(*memory.Find("a"), "1");
  for (const char* k : {"b", "c", "d"}) EXPECT_TRUE(memory.Insert(k, k));
  EXPECT_EQ(memory.size(), 3u);
  EXPECT_EQ(memory.Find("a"), nullptr) << "the oldest is forgotten first";
  EXPECT_EQ(*memory.Find("d"), "d");
}

TEST(RecentMemoryTest, SavedIncrementallyItRestoresTheSameEntriesInTheSameOrder) {
  testing::ScratchDir dir;
  std::unique_ptr<KvStore> store = OpenStore(dir.path());
  ASSERT_NE(store, nullptr);
  RecentMemory memory(100);
  for (int k = 0; k < 70; ++k) memory.Insert(absl::StrCat("id-", k), absl::StrCat("v", k));
  Save(memory, *store);
  for (int k = 70; k < 150; ++k) memory.Insert(absl::StrCat("id-", k), absl::StrCat("v", k));
  Save(memory, *store);
  // 150 inserted, the first 50 forgotten: deleted from the store too.
  EXPECT_EQ(StoredEntries(*store), 100);
  KvWriteBatch nothing;
  memory.SaveInto(nothing, kFamily, "m/");
  EXPECT_EQ(nothing.Count(), 0u) << "a save with nothing changed writes nothing";

  RecentMemory restored(100);
  ASSERT_OK(restored.Restore(*store, kFamily, "m/"));
  EXPECT_EQ(restored.size(), 100u);
  EXPECT_EQ(restored.Find("id-49"), nullptr);
  ASSERT_NE(restored.Find("id-50"), nullptr);
  EXPECT_EQ(*restored.Find("id-149"), "v149");
  // The order came back: the next inserts forget id-50, then id-51.
  restored.Insert("new-1", "x");
  restored.Insert("new-2", "y");
  EXPECT_EQ(restored.Find("id-51"), nullptr);
  EXPECT_NE(restored.Find("id-52"), nullptr);
  // And the saves go on from where the store is.
  Save(restored, *store);
  EXPECT_EQ(StoredEntries(*store), 100);
  RecentMemory again(100);
  ASSERT_OK(again.Restore(*store, kFamily, "m/"));
  EXPECT_EQ(again.Find("id-51"), nullptr);
  EXPECT_EQ(*again.Find("new-2"), "y");
}

TEST(RecentMemoryTest, ASmallerCapacityForgetsTheOldestRestoredAndTheNextSaveDeletesThem) {
  testing::ScratchDir dir;
  std::unique_ptr<KvStore> store = OpenStore(dir.path());
  ASSERT_NE(store, nullptr);
  RecentMemory memory(10);
  for (int k = 0; k < 10; ++k) memory.Insert(absl::StrCat(k), "v");
  Save(memory, *store);
  RecentMemory smaller(4);
  ASSERT_OK(smaller.Restore(*store, kFamily, "m/"));
  EXPECT_EQ(smaller.size(), 4u);
  EXPECT_EQ(smaller.Find("5"), nullptr);
  EXPECT_NE(smaller.Find("6"), nullptr);
  Save(smaller, *store);
  EXPECT_EQ(StoredEntries(*store), 4);
}

TEST(RecentMemoryTest, AnUnreadableEntryIsDataLossNamingIt) {
  testing::ScratchDir dir;
  std::unique_ptr<KvStore> store = OpenStore(dir.path());
  ASSERT_NE(store, nullptr);
  ASSERT_OK(store->Put(kFamily, std::string("m/\0\0\0\0\0\0\0\x01", 10), "\xff"));
  RecentMemory memory(4);
  const absl::Status restored = memory.Restore(*store, kFamily, "m/");
  EXPECT_TRUE(absl::IsDataLoss(restored)) << restored;
  EXPECT_THAT(restored.message(), ::testing::HasSubstr("key length"));
  EXPECT_EQ(memory.size(), 0u);
  ASSERT_OK(store->Put(kFamily, std::string("m/\0\0\0\0\0\0\0\x03", 10),
                       std::string("\x01"
                                   "ab",
                                   3)));
  ASSERT_OK(store->Put(kFamily, std::string("m/\0\0\0\0\0\0\0\x01", 10),
                       std::string("\x01"
                                   "aa",
                                   3)));
  const absl::Status gap = memory.Restore(*store, kFamily, "m/");
  EXPECT_THAT(gap.message(), ::testing::HasSubstr("not contiguous"));
}

}  // namespace
}  // namespace vigil::cluster
