#include "vigil/common/large_array.h"

#include <cstdint>
#include <memory>

#include "gtest/gtest.h"

namespace vigil {
namespace {

TEST(LargeArrayTest, ElementsStartValueInitialized) {
  LargeArray<uint64_t> small(100);
  LargeArray<uint64_t> big((size_t{3} << 20) / sizeof(uint64_t));
  for (uint64_t v : small) EXPECT_EQ(v, 0u);
  for (uint64_t v : big) ASSERT_EQ(v, 0u);
  EXPECT_EQ(small.size(), 100u);
}

TEST(LargeArrayTest, LargeArraysAreHugePageAligned) {
  LargeArray<char> big(size_t{1} << 20);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(big.begin()) % (size_t{2} << 20), 0u);
  EXPECT_EQ(big.MemoryBytes(), size_t{2} << 20);
  // Reserved bytes are rounded to whole huge pages; small arrays report their exact size.
  EXPECT_EQ(LargeArray<char>((size_t{2} << 20) + 1).MemoryBytes(), size_t{4} << 20);
  EXPECT_EQ(LargeArray<char>(1000).MemoryBytes(), 1000u);
}

TEST(LargeArrayTest, DestroysElementsAndMoves) {
  auto counter = std::make_shared<int>(0);
  {
    LargeArray<std::shared_ptr<int>> a(3);
    for (auto& p : a) p = counter;
    EXPECT_EQ(counter.use_count(), 4);
    LargeArray<std::shared_ptr<int>> b = std::move(a);
    EXPECT_EQ(a.size(), 0u);
    EXPECT_EQ(b.size(), 3u);
    EXPECT_EQ(counter.use_count(), 4);
    b = LargeArray<std::shared_ptr<int>>(1);
    EXPECT_EQ(counter.use_count(), 1);
  }
  EXPECT_EQ(counter.use_count(), 1);
}

}  // namespace
}  // namespace vigil
