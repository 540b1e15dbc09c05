#include "vigil/common/huge_page_pool.h"

#include <cstdint>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace vigil {
namespace {

TEST(HugePagePoolTest, BlocksAreAlignedDistinctAndReusedByClass) {
  HugePagePool pool;
  std::set<uintptr_t> seen;
  std::vector<std::pair<void*, size_t>> blocks;
  for (size_t bytes : {1, 16, 17, 32, 100, 4096}) {
    void* p = pool.Allocate(bytes);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 16, 0u);
    std::memset(p, 0xab, bytes);
    EXPECT_TRUE(seen.insert(reinterpret_cast<uintptr_t>(p)).second);
    blocks.emplace_back(p, bytes);
  }
  // 1→16, 16, 17→32, 32, 100→112, 4096 bytes in use.
  EXPECT_EQ(pool.used_bytes(), 16u + 16 + 32 + 32 + 112 + 4096);
  EXPECT_EQ(pool.reserved_bytes(), size_t{2} << 20);
  pool.Deallocate(blocks[2].first, 17);
  // A request of the same class takes the freed block; another class does not.
  EXPECT_EQ(pool.Allocate(20), blocks[2].first);
  EXPECT_NE(pool.Allocate(48), blocks[2].first);
  for (auto& [p, bytes] : blocks) pool.Deallocate(p, bytes);
}

TEST(HugePagePoolTest, SlabsAreHugePageAlignedAndAddedWhenFull) {
  HugePagePool pool;
  void* first = pool.Allocate(4096);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % (size_t{2} << 20), 0u);
  for (int i = 0; i < 600; ++i) pool.Allocate(4096);  // more than one 2 MiB slab
  EXPECT_EQ(pool.reserved_bytes(), size_t{4} << 20);
  EXPECT_EQ(pool.used_bytes(), 601u * 4096);
}

TEST(HugePagePoolTest, AllocatorKeepsVectorContentsAcrossGrowth) {
  std::vector<uint64_t, HugePageAllocator<uint64_t>> v;
  for (uint64_t i = 0; i < 2000; ++i) v.push_back(i * i);  // ends above kMaxBlockBytes
  for (uint64_t i = 0; i < 2000; ++i) ASSERT_EQ(v[i], i * i);
  v.resize(3);
  v.shrink_to_fit();
  EXPECT_EQ(v[2], 4u);
}

TEST(HugePagePoolTest, ConcurrentUseFromSeveralThreads) {
  HugePagePool pool;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&pool, t] {
      std::vector<uint32_t*> mine;
      for (int i = 0; i < 5000; ++i) {
        auto* p = static_cast<uint32_t*>(pool.Allocate(16 + (i % 7) * 16));
        *p = static_cast<uint32_t>(t * 100000 + i);
        mine.push_back(p);
        if (i % 3 == 0) {
          pool.Deallocate(mine.back(), 16 + (i % 7) * 16);
          mine.pop_back();
        }
      }
      for (size_t k = 0; k < mine.size(); ++k) {
        ASSERT_EQ(*mine[k] / 100000, static_cast<uint32_t>(t));
      }
    });
  }
  for (std::thread& th : threads) th.join();
}

}  // namespace
}  // namespace vigil
