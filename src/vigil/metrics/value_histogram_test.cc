#include "vigil/metrics/value_histogram.h"

#include <cmath>
#include <limits>
#include <memory>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "vigil/testing/status_matchers.h"

namespace vigil {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::vigil::testing::StatusIs;

constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(ValueHistogram, CountsEachValueInTheFirstBucketAtOrAboveIt) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ValueHistogram> h, ValueHistogram::Create({0.1, 0.5, 1}));
  EXPECT_THAT(h->bounds(), ElementsAre(0.1, 0.5, 1));
  EXPECT_THAT(h->CumulativeCounts(), ElementsAre(0, 0, 0, 0));
  EXPECT_EQ(h->count(), 0u);
  EXPECT_EQ(h->sum(), 0.0);
  // Edge cases, with the bucket each lands in:
  h->Record(0.1);           // exactly on a bound: le is inclusive -> le=0.1
  h->Record(-3);            // below the first bound -> le=0.1
  h->Record(0.1000001);     // just above a bound -> le=0.5
  h->Record(0.5);           // -> le=0.5
  h->Record(1);             // -> le=1
  h->Record(1.5);           // above the last bound -> +Inf
  h->Record(std::nan(""));  // ignored: no bucket, no sum
  EXPECT_THAT(h->CumulativeCounts(), ElementsAre(2, 4, 5, 6));
  EXPECT_EQ(h->count(), 6u);
  EXPECT_DOUBLE_EQ(h->sum(), 0.1 - 3 + 0.1000001 + 0.5 + 1 + 1.5);
}

TEST(ValueHistogram, InfinitiesCountAtTheEndsAndMakeTheSumInfinite) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ValueHistogram> h, ValueHistogram::Create({0, 10}));
  h->Record(-kInf);  // <= every bound -> le=0
  EXPECT_THAT(h->CumulativeCounts(), ElementsAre(1, 1, 1));
  EXPECT_EQ(h->sum(), -kInf);
  h->Record(kInf);  // above every finite bound -> +Inf
  EXPECT_THAT(h->CumulativeCounts(), ElementsAre(1, 1, 2));
  EXPECT_TRUE(std::isnan(h->sum())) << "-Inf + Inf, as in the Prometheus clients";
}

TEST(ValueHistogram, NegativeZeroIsZero) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ValueHistogram> h, ValueHistogram::Create({0, 1}));
  h->Record(-0.0);
  EXPECT_THAT(h->CumulativeCounts(), ElementsAre(1, 1, 1));
}

TEST(ValueHistogram, IntegerBoundsForBatchSizes) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ValueHistogram> h,
                       ValueHistogram::Create({1, 2, 4, 8, 16, 32, 64}));
  for (int size = 1; size <= 100; ++size) h->Record(size);
  // Cumulative: 1 | 1..2 | 1..4 | ... | 1..64 | all 100.
  EXPECT_THAT(h->CumulativeCounts(), ElementsAre(1, 2, 4, 8, 16, 32, 64, 100));
  EXPECT_EQ(h->count(), 100u);
  EXPECT_EQ(h->sum(), 5050.0) << "integers add exactly in a double";
}

TEST(ValueHistogram, RejectsBadBounds) {
  const auto invalid = [](const char* substring) {
    return StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(substring));
  };
  // Why each is rejected:
  EXPECT_THAT(ValueHistogram::Create({}), invalid("empty"));                   // no bucket but +Inf
  EXPECT_THAT(ValueHistogram::Create({1, 1}), invalid("strictly ascending"));  // duplicate
  EXPECT_THAT(ValueHistogram::Create({0.0, -0.0}), invalid("strictly ascending"));  // -0 == 0
  EXPECT_THAT(ValueHistogram::Create({2, 1}), invalid("bound 1 (1) is not above bound 0 (2)"));
  EXPECT_THAT(ValueHistogram::Create({1, kInf}), invalid("finite"));  // +Inf is implied
  EXPECT_THAT(ValueHistogram::Create({-kInf, 1}), invalid("bound 0"));
  EXPECT_THAT(ValueHistogram::Create({1, std::nan("")}), invalid("finite"));
  EXPECT_OK(ValueHistogram::ValidateBounds({-1, 0, 0.5}));  // negative bounds are fine
  EXPECT_OK(ValueHistogram::ValidateBounds({42}));
}

TEST(ValueHistogram, ConcurrentRecordsAreAllCounted) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 100'000;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<ValueHistogram> h,
                       ValueHistogram::Create({0.25, 0.5, 0.75}));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&h] {
      // Exactly representable values, so the sum is exact in any order of addition.
      for (int i = 0; i < kPerThread; ++i) h->Record((i % 4) * 0.25 + 0.125);
    });
  }
  // Reads overlapping the writers stay consistent. EXPECT, not ASSERT: returning early would
  // destroy joinable threads.
  std::vector<uint64_t> last(4, 0);
  for (int read = 0; read < 100; ++read) {
    const std::vector<uint64_t> now = h->CumulativeCounts();
    for (size_t i = 0; i < now.size(); ++i) {
      EXPECT_LE(i == 0 ? 0 : now[i - 1], now[i]) << "cumulative counts never decrease along le";
      EXPECT_GE(now[i], last[i]) << "counts never go back";
    }
    last = now;
  }
  for (std::thread& t : threads) t.join();
  constexpr uint64_t kQuarter = uint64_t{kThreads} * kPerThread / 4;
  EXPECT_THAT(h->CumulativeCounts(),
              ElementsAre(kQuarter, 2 * kQuarter, 3 * kQuarter, 4 * kQuarter));
  EXPECT_EQ(h->count(), 4 * kQuarter);
  // Per four values: 0.125 + 0.375 + 0.625 + 0.875 = 2.
  EXPECT_EQ(h->sum(), 2.0 * static_cast<double>(kQuarter));
}

}  // namespace
}  // namespace vigil
