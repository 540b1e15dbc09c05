#include "vigil/features/counterparty_counts.h"

#include <map>
#include <random>
#include <set>

#include "gtest/gtest.h"

namespace vigil {
namespace {

// Random adds and removals, crossing the small/large boundary both ways, against std::map.
TEST(CounterpartyCounts, MatchesReferenceAcrossSmallAndLargeRepresentations) {
  std::mt19937 rng(5);
  CounterpartyCounts counts;
  std::map<std::pair<uint32_t, int>, int> ref;
  for (int step = 0; step < 20000; ++step) {
    const auto account = static_cast<uint32_t>(rng() % (step < 10000 ? 200 : 20));
    const auto slot = static_cast<CounterpartyCounts::Slot>(rng() % 4);
    int& n = ref[{account, slot}];
    const bool add = n == 0 || rng() % 2 == 0;
    counts.Add(account, slot, add ? +1 : -1);
    n += add ? 1 : -1;
    if (step % 97 != 0) continue;
    std::set<uint32_t> d24, d7, in7, out7;
    for (const auto& [key, value] : ref) {
      if (value == 0) continue;
      const auto [a, s] = key;
      if (s == CounterpartyCounts::kIn24h || s == CounterpartyCounts::kOut24h) d24.insert(a);
      if (s == CounterpartyCounts::kIn7d || s == CounterpartyCounts::kOut7d) d7.insert(a);
      if (s == CounterpartyCounts::kIn7d) in7.insert(a);
      if (s == CounterpartyCounts::kOut7d) out7.insert(a);
    }
    ASSERT_EQ(counts.distinct_24h(), d24.size()) << step;
    ASSERT_EQ(counts.distinct_7d(), d7.size()) << step;
    ASSERT_EQ(counts.fan_in_7d(), in7.size()) << step;
    ASSERT_EQ(counts.fan_out_7d(), out7.size()) << step;
    for (uint32_t a = 0; a < 200; a += 7) {
      ASSERT_EQ(counts.Has(a, CounterpartyCounts::kIn7d), in7.count(a) > 0) << step;
    }
  }
}

TEST(CounterpartyCounts, CountsBeyondSixteenBitsStayExact) {
  CounterpartyCounts counts;
  constexpr int kMany = 70'000;  // more than a 16-bit count holds
  for (int i = 0; i < kMany; ++i) counts.Add(7, CounterpartyCounts::kOut7d, +1);
  counts.Add(9, CounterpartyCounts::kIn7d, +1);
  EXPECT_EQ(counts.fan_out_7d(), 1u);
  for (int i = 0; i < kMany - 1; ++i) counts.Add(7, CounterpartyCounts::kOut7d, -1);
  EXPECT_TRUE(counts.Has(7, CounterpartyCounts::kOut7d));  // one event left
  EXPECT_EQ(counts.distinct_7d(), 2u);
  counts.Add(7, CounterpartyCounts::kOut7d, -1);
  EXPECT_FALSE(counts.Has(7, CounterpartyCounts::kOut7d));
  EXPECT_EQ(counts.fan_out_7d(), 0u);
  EXPECT_EQ(counts.distinct_7d(), 1u);
}

}  // namespace
}  // namespace vigil
