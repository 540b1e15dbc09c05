#include "vigil/features/account_index.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace vigil {
namespace {

TEST(AccountIndex, AssignsDenseNumbersInFirstSeenOrder) {
  AccountIndex index;
  EXPECT_EQ(index.FindOrAdd(AccountKey("001", "A")), 0u);
  EXPECT_EQ(index.FindOrAdd(AccountKey("002", "A")), 1u);  // same account id, other bank
  EXPECT_EQ(index.FindOrAdd(AccountKey("001", "A")), 0u);
  EXPECT_EQ(index.Find(AccountKey("002", "A")), 1);
  EXPECT_EQ(index.Find(AccountKey("003", "A")), -1);
  EXPECT_EQ(index.key(1), AccountKey("002", "A"));
  EXPECT_EQ(index.size(), 2u);
}

TEST(AccountIndex, KeysSurviveArenaGrowthAndOversizedKeys) {
  AccountIndex index;
  const std::string huge(3 << 20, 'x');  // larger than one arena chunk
  for (int i = 0; i < 200000; ++i) index.FindOrAdd("account-" + std::to_string(i));
  EXPECT_EQ(index.FindOrAdd(huge), 200000u);
  for (int i = 0; i < 200000; i += 997) {
    ASSERT_EQ(index.key(static_cast<uint32_t>(i)), "account-" + std::to_string(i));
  }
  EXPECT_EQ(index.key(200000), huge);
  EXPECT_EQ(index.FindOrAdd("after-huge"), 200001u);
  EXPECT_GT(index.MemoryBytes(), huge.size());
}

}  // namespace
}  // namespace vigil

namespace vigil {
namespace {

TEST(AccountIndex, LongKeysSharingTheInlinePrefixStayDistinct) {
  AccountIndex index;
  const std::string prefix(30, 'k');  // longer than the inline part of a slot
  EXPECT_EQ(index.FindOrAdd(prefix + "1"), 0u);
  EXPECT_EQ(index.FindOrAdd(prefix + "2"), 1u);
  EXPECT_EQ(index.FindOrAdd(prefix), 2u);
  EXPECT_EQ(index.Find(prefix + "2"), 1);
  EXPECT_EQ(index.Find(prefix + "3"), -1);
  EXPECT_EQ(index.FindOrAdd(prefix + "1"), 0u);
}

// The lookahead path (hash computed first, lookup later) agrees with the plain one, across
// growth of the table between hashing and lookup.
TEST(AccountIndex, LookupsWithPrecomputedHashAgree) {
  AccountIndex index;
  std::vector<std::string> keys;
  for (int i = 0; i < 5000; ++i) keys.push_back("bank\x1f" + std::to_string(i * 7919));
  std::vector<uint64_t> hashes;
  for (const std::string& k : keys) hashes.push_back(index.Hash(k));
  for (size_t i = 0; i < keys.size(); ++i) {
    index.PrefetchSlot(hashes[i]);
    EXPECT_EQ(index.Find(keys[i], hashes[i]), -1);
    ASSERT_EQ(index.FindOrAdd(keys[i], hashes[i]), i);
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    ASSERT_EQ(index.Find(keys[i]), static_cast<int64_t>(i));
    ASSERT_EQ(index.Find(keys[i], hashes[i]), static_cast<int64_t>(i));
  }
}

}  // namespace
}  // namespace vigil
