#include "vigil/metrics/latency_histogram.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <random>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace vigil {
namespace {

using std::chrono::nanoseconds;
using ::testing::ElementsAre;

// Nearest-rank percentile of sorted samples, the definition LatencyHistogram::Percentile uses.
int64_t ExactPercentile(const std::vector<int64_t>& sorted, double p) {
  const double r = std::ceil(p / 100.0 * static_cast<double>(sorted.size()));
  const size_t rank = r < 1 ? 1 : std::min(sorted.size(), static_cast<size_t>(r));
  return sorted[rank - 1];
}

// Log-uniform durations from 1 ns to 100 s: every octave of the range gets samples.
std::vector<int64_t> LogUniformSamples(size_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> exponent(0.0, 11.0);
  std::vector<int64_t> out(n);
  for (int64_t& v : out) v = static_cast<int64_t>(std::pow(10.0, exponent(rng)));
  return out;
}

TEST(LatencyHistogram, BucketsTileTheRangeWithBoundedWidth) {
  EXPECT_EQ(LatencyHistogram::BucketIndex(0), 0);
  EXPECT_EQ(LatencyHistogram::BucketLowerBound(0), 0u);
  for (int i = 0; i < LatencyHistogram::kNumBuckets; ++i) {
    const uint64_t lo = LatencyHistogram::BucketLowerBound(i);
    const uint64_t hi = LatencyHistogram::BucketUpperBound(i);
    ASSERT_LE(lo, hi) << i;
    ASSERT_EQ(LatencyHistogram::BucketIndex(lo), i);
    ASSERT_EQ(LatencyHistogram::BucketIndex(hi), i);
    if (i + 1 < LatencyHistogram::kNumBuckets) {
      ASSERT_EQ(LatencyHistogram::BucketLowerBound(i + 1), hi + 1) << "gap or overlap at " << i;
    }
    if (i < LatencyHistogram::kLinearBuckets) {
      ASSERT_EQ(lo, hi) << "values below 256 ns are exact";
    } else {
      // Width <= lower / 128 is what bounds the relative error.
      ASSERT_LE((hi - lo + 1) * LatencyHistogram::kSubBuckets, lo) << i;
    }
  }
  const int last = LatencyHistogram::kNumBuckets - 1;
  EXPECT_EQ(LatencyHistogram::BucketUpperBound(last),
            static_cast<uint64_t>(LatencyHistogram::kMaxTrackable.count()));
  // Past the range, values clamp into the top bucket.
  EXPECT_EQ(LatencyHistogram::BucketIndex(uint64_t{1} << 50), last);
  // 100 s, the range the brief asks for, is inside.
  EXPECT_LT(LatencyHistogram::BucketIndex(100'000'000'000), last);
}

TEST(LatencyHistogram, EmptyHistogramReadsAsZero) {
  const LatencyHistogram h;
  EXPECT_EQ(h.count(), 0u);
  EXPECT_EQ(h.min(), nanoseconds(0));
  EXPECT_EQ(h.max(), nanoseconds(0));
  EXPECT_EQ(h.sum(), nanoseconds(0));
  EXPECT_EQ(h.mean().count(), 0.0);
  EXPECT_EQ(h.Percentile(50), nanoseconds(0));
  EXPECT_THAT(h.CumulativeCounts({nanoseconds(10)}), ElementsAre(0u, 0u));
}

TEST(LatencyHistogram, PercentilesWithinTheDocumentedErrorOfAnExactSort) {
  const std::vector<int64_t> samples = LogUniformSamples(200000, 7);
  LatencyHistogram h;
  for (int64_t v : samples) h.Record(nanoseconds(v));
  std::vector<int64_t> sorted = samples;
  std::sort(sorted.begin(), sorted.end());

  EXPECT_EQ(h.count(), samples.size());
  EXPECT_EQ(h.min(), nanoseconds(sorted.front()));
  EXPECT_EQ(h.max(), nanoseconds(sorted.back()));
  int64_t sum = 0;
  for (int64_t v : samples) sum += v;
  EXPECT_EQ(h.sum(), nanoseconds(sum));
  EXPECT_DOUBLE_EQ(h.mean().count(), static_cast<double>(sum) / samples.size());

  for (double p : {0.0, 0.1, 1.0, 10.0, 25.0, 50.0, 75.0, 90.0, 99.0, 99.9, 99.99, 100.0}) {
    SCOPED_TRACE(p);
    const int64_t exact = ExactPercentile(sorted, p);
    const int64_t got = h.Percentile(p).count();
    EXPECT_GE(got, exact) << "reports the bucket's upper bound: never below the exact value";
    EXPECT_LE(static_cast<double>(got),
              static_cast<double>(exact) * (1 + LatencyHistogram::kMaxRelativeError));
    if (exact < LatencyHistogram::kLinearBuckets) {
      EXPECT_EQ(got, exact);
    }
  }
  EXPECT_EQ(h.Percentile(0), h.min());
  EXPECT_EQ(h.Percentile(100), h.max());
}

TEST(LatencyHistogram, EveryPercentileOfARealisticStageIsWithinBound) {
  // A latency-shaped distribution (log-normal around 40 us) checked at every integer percentile.
  std::mt19937_64 rng(11);
  std::lognormal_distribution<double> dist(std::log(40'000.0), 0.8);
  std::vector<int64_t> samples(50000);
  LatencyHistogram h;
  for (int64_t& v : samples) {
    v = static_cast<int64_t>(dist(rng));
    h.Record(nanoseconds(v));
  }
  std::sort(samples.begin(), samples.end());
  for (int p = 0; p <= 100; ++p) {
    const int64_t exact = ExactPercentile(samples, p);
    const int64_t got = h.Percentile(p).count();
    ASSERT_GE(got, exact) << p;
    ASSERT_LE(got - exact, exact / LatencyHistogram::kSubBuckets) << p;
  }
}

TEST(LatencyHistogram, SmallValuesAreExact) {
  LatencyHistogram h;
  for (int v = 1; v <= 100; ++v) h.Record(nanoseconds(v));
  EXPECT_EQ(h.Percentile(50), nanoseconds(50));
  EXPECT_EQ(h.Percentile(99), nanoseconds(99));
  EXPECT_EQ(h.Percentile(99.5), nanoseconds(100));  // rank ceil(99.5) = 100
}

TEST(LatencyHistogram, PercentileArgumentIsClamped) {
  LatencyHistogram h;
  h.Record(nanoseconds(10));
  h.Record(nanoseconds(20));
  EXPECT_EQ(h.Percentile(-5), nanoseconds(10));
  EXPECT_EQ(h.Percentile(250), nanoseconds(20));
  EXPECT_EQ(h.Percentile(std::nan("")), nanoseconds(10));
}

TEST(LatencyHistogram, NegativeAndOutOfRangeDurations) {
  LatencyHistogram h;
  h.Record(nanoseconds(-5));  // a clock stepped back: counts as 0
  EXPECT_EQ(h.min(), nanoseconds(0));
  const nanoseconds hour = std::chrono::hours(1);
  h.Record(hour);  // past kMaxTrackable: top bucket, but max() stays exact
  EXPECT_EQ(h.count(), 2u);
  EXPECT_EQ(h.max(), hour);
  EXPECT_EQ(h.Percentile(100), hour);
  EXPECT_EQ(h.sum(), hour);
}

TEST(LatencyHistogram, MergeEqualsRecordingEverything) {
  const std::vector<int64_t> a = LogUniformSamples(20000, 1);
  const std::vector<int64_t> b = LogUniformSamples(30000, 2);
  LatencyHistogram ha, hb, all;
  for (int64_t v : a) {
    ha.Record(nanoseconds(v));
    all.Record(nanoseconds(v));
  }
  for (int64_t v : b) {
    hb.Record(nanoseconds(v));
    all.Record(nanoseconds(v));
  }
  LatencyHistogram merged;
  merged.Merge(ha);  // into an empty histogram: min comes from "ha"
  merged.Merge(hb);
  EXPECT_EQ(merged.count(), all.count());
  EXPECT_EQ(merged.sum(), all.sum());
  EXPECT_EQ(merged.min(), all.min());
  EXPECT_EQ(merged.max(), all.max());
  for (double p : {1.0, 50.0, 99.0, 99.9}) EXPECT_EQ(merged.Percentile(p), all.Percentile(p));
  EXPECT_EQ(ha.count(), a.size()) << "the source is unchanged";
  // Merging an empty histogram changes nothing (its min sentinel must not leak).
  const LatencyHistogram empty;
  merged.Merge(empty);
  EXPECT_EQ(merged.min(), all.min());
  EXPECT_EQ(merged.count(), all.count());
}

TEST(LatencyHistogram, CumulativeCountsNeverOverclaim) {
  LatencyHistogram h;
  for (int64_t v : {100, 200, 1000, 999'999, 1'000'000, 5'000'000}) h.Record(nanoseconds(v));
  const std::vector<nanoseconds> bounds = {nanoseconds(200), nanoseconds(1000),
                                           std::chrono::milliseconds(1),
                                           std::chrono::milliseconds(10)};
  // 200 ns: 100 and 200 (exact buckets). 1000 ns: its bucket [1000, 1003] lies above 1000, so it
  // moves up. 1 ms: the bucket of 999,999 and 1,000,000 is [999424, 1003519], which crosses 1 ms,
  // so neither counts there: le counts are lower bounds, never claiming a sample was faster.
  EXPECT_THAT(h.CumulativeCounts(bounds), ElementsAre(2u, 2u, 3u, 6u, 6u));
  EXPECT_EQ(LatencyHistogram::BucketLowerBound(LatencyHistogram::BucketIndex(1'000'000)), 999'424u);
}

TEST(LatencyHistogram, ConcurrentRecordsAreNotLost) {
  LatencyHistogram h;
  constexpr int kThreads = 4;
  constexpr int kPerThread = 100000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&h, t] {
      for (int i = 0; i < kPerThread; ++i) h.Record(nanoseconds(1 + (i % 1000) + t));
    });
  }
  // A concurrent reader must be safe (TSan-clean) and see non-decreasing counts.
  uint64_t last = 0;
  for (int i = 0; i < 100; ++i) {
    const uint64_t now = h.count();
    EXPECT_GE(now, last);
    last = now;
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(h.count(), uint64_t{kThreads} * kPerThread);
  EXPECT_EQ(h.min(), nanoseconds(1));
  EXPECT_EQ(h.max(), nanoseconds(1000 + kThreads - 1));
}

}  // namespace
}  // namespace vigil
