#include "vigil/common/clock.h"

#include <chrono>
#include <thread>

#include "gtest/gtest.h"
#include "vigil/testing/fake_clock.h"

namespace vigil {
namespace {

TEST(Clock, UnixMicrosRoundTrip) {
  for (int64_t us : {int64_t{0}, int64_t{-1}, int64_t{1'661'990'400'000'000}}) {
    EXPECT_EQ(ToUnixMicros(FromUnixMicros(us)), us);
  }
}

TEST(RealClock, IsOneInstanceAndRoughlyNow) {
  Clock& a = RealClock();
  EXPECT_EQ(&a, &RealClock());
  const auto sys = std::chrono::system_clock::now();
  const UtcTime now = a.Now();
  // Generous bound: only checks that Now() is the system clock in microseconds, not a timing.
  EXPECT_LT(std::chrono::abs(now - std::chrono::time_point_cast<std::chrono::microseconds>(sys)),
            std::chrono::minutes(1));
}

TEST(RealClock, MonotonicNeverGoesBack) {
  const Clock& c = RealClock();
  auto prev = c.Monotonic();
  for (int i = 0; i < 1000; ++i) {
    const auto next = c.Monotonic();
    ASSERT_GE(next, prev);
    prev = next;
  }
}

TEST(ThreadCpuSeconds, CountsTheThreadsWorkNotItsSleep) {
  const double start = ThreadCpuSeconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const double slept = ThreadCpuSeconds() - start;
  EXPECT_LT(slept, 0.03);  // sleeping costs (almost) no CPU
  volatile double sink = 0;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(60);
  while (std::chrono::steady_clock::now() < until) sink = sink + 1;
  const double busy = ThreadCpuSeconds() - start - slept;
  EXPECT_GT(busy, 0.01);  // spinning does, even on a loaded machine
  EXPECT_LT(busy, 5.0);
}

TEST(FakeClock, MovesOnlyWhenAdvanced) {
  testing::FakeClock clock(FromUnixMicros(1000));
  EXPECT_EQ(ToUnixMicros(clock.Now()), 1000);
  EXPECT_EQ(ToUnixMicros(clock.Now()), 1000);
  const auto m0 = clock.Monotonic();
  clock.Advance(std::chrono::milliseconds(5));
  EXPECT_EQ(ToUnixMicros(clock.Now()), 6000);
  EXPECT_EQ(clock.Monotonic() - m0, std::chrono::milliseconds(5));
  clock.Set(FromUnixMicros(42));
  EXPECT_EQ(ToUnixMicros(clock.Now()), 42);
}

}  // namespace
}  // namespace vigil
