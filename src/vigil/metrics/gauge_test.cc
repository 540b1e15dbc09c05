#include "vigil/metrics/gauge.h"

#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace vigil {
namespace {

TEST(Gauge, SetAddIncrementDecrement) {
  Gauge g;
  EXPECT_EQ(g.value(), 0.0);
  g.Set(2.5);
  EXPECT_EQ(g.value(), 2.5);
  g.Add(-4.0);
  EXPECT_EQ(g.value(), -1.5);
  g.Increment();
  g.Increment();
  g.Decrement();
  EXPECT_EQ(g.value(), -0.5);
}

TEST(Gauge, ConcurrentAddsAreNotLost) {
  Gauge g;
  constexpr int kThreads = 4;
  constexpr int kPerThread = 50000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&g, t] {
      for (int i = 0; i < kPerThread; ++i) {
        if (t % 2 == 0) {
          g.Increment();
        } else {
          g.Add(2.0);
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  // Small integers are exact in double: every add must have landed.
  EXPECT_EQ(g.value(), 2.0 * kPerThread * 1 + 2.0 * kPerThread * 2);
}

}  // namespace
}  // namespace vigil
