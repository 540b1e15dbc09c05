// LatencyHistogram: a fixed-size log-linear histogram of durations (HdrHistogram-style) for
// per-stage latency percentiles, cheap enough to record every transaction at every stage.
//
//   LatencyHistogram rules_latency;
//   const auto start = clock.Monotonic();
//   ...
//   rules_latency.Record(clock.Monotonic() - start);
//   rules_latency.Percentile(99);  // within 0.79 % above the exact P99
//
// Buckets: each value below 256 ns has its own bucket; above that, each power of two
// [2^k, 2^(k+1)) is split into 128 equal buckets, so a bucket is at most 1/128 of its lower bound
// wide. Tracked range: 0 to kMaxTrackable (2^37 - 1 ns, about 137 s); longer durations count in
// the top bucket, and max() stays exact. 3,968 buckets of 8 bytes (31 KiB), allocated once by the
// constructor; nothing allocates afterwards.
//
// Accuracy: Percentile(p) is the inclusive upper bound of the bucket that holds the nearest-rank
// p-th percentile sample, clamped to [min(), max()]. For samples up to kMaxTrackable:
//   exact <= Percentile(p) <= exact * (1 + kMaxRelativeError),  kMaxRelativeError = 1/128,
// and it is exact below 256 ns. A percentile that falls in the top bucket reports max().
//
// Cost: Record is a bucket index (one count-leading-zeros and shifts) and two relaxed atomic adds
// (bucket and sum), plus a compare-exchange only when a new min or max is seen.
//
// Thread safety: safe for concurrent use: any number of threads may Record into, Merge into and
// read one histogram at once. Readers do not see one atomic snapshot: a read that overlaps
// records may miss some of them in one statistic and not another (count() vs. sum). Many
// threads recording into one histogram share its cache lines; on a hot path across cores, give
// each worker its own histogram and Merge them when reporting.
#ifndef VIGIL_METRICS_LATENCY_HISTOGRAM_H_
#define VIGIL_METRICS_LATENCY_HISTOGRAM_H_

#include <atomic>
#include <bit>
#include <chrono>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

namespace vigil {

class LatencyHistogram {
 public:
  // Values below kLinearBuckets ns get one bucket each.
  static constexpr int kLinearBuckets = 256;
  // Buckets per power of two above that.
  static constexpr int kSubBucketBits = 7;
  static constexpr int kSubBuckets = 1 << kSubBucketBits;
  static constexpr int kMaxBits = 37;  // values up to 2^37 - 1 ns
  static constexpr int kNumBuckets = kLinearBuckets + (kMaxBits - 8) * kSubBuckets;
  static constexpr std::chrono::nanoseconds kMaxTrackable{(int64_t{1} << kMaxBits) - 1};
  static constexpr double kMaxRelativeError = 1.0 / kSubBuckets;

  LatencyHistogram();
  LatencyHistogram(const LatencyHistogram&) = delete;
  LatencyHistogram& operator=(const LatencyHistogram&) = delete;

  // Negative durations (a clock stepped back) count as 0.
  void Record(std::chrono::nanoseconds latency) {
    const int64_t ns = latency.count();
    const uint64_t v = ns < 0 ? 0 : static_cast<uint64_t>(ns);
    buckets_[BucketIndex(v)].fetch_add(1, std::memory_order_relaxed);
    sum_ns_.fetch_add(v, std::memory_order_relaxed);
    uint64_t seen = min_ns_.load(std::memory_order_relaxed);
    while (v < seen && !min_ns_.compare_exchange_weak(seen, v, std::memory_order_relaxed)) {
    }
    seen = max_ns_.load(std::memory_order_relaxed);
    while (v > seen && !max_ns_.compare_exchange_weak(seen, v, std::memory_order_relaxed)) {
    }
  }

  // Adds every sample of "other" to this histogram ("other" is unchanged).
  void Merge(const LatencyHistogram& other);

  // Number of samples.
  uint64_t count() const;
  // Smallest and largest sample, exact; 0 when empty.
  std::chrono::nanoseconds min() const;
  std::chrono::nanoseconds max() const;
  // Sum of all samples, exact (wraps after 584 years of total latency).
  std::chrono::nanoseconds sum() const;
  // Arithmetic mean, exact up to double rounding; 0 when empty.
  std::chrono::duration<double, std::nano> mean() const;

  // The p-th percentile, p in [0, 100] (clamped), with the error bound above: the nearest-rank
  // sample is the ceil(p / 100 * count())-th smallest (the smallest for p = 0). 0 when empty.
  std::chrono::nanoseconds Percentile(double p) const;

  // For exporters: element i is the number of samples whose bucket lies entirely at or below
  // bounds[i] (so a sample within 1/128 below a bound may count only at the next bound up: the
  // counts never claim a sample was faster than it may have been); the last element, one past
  // bounds, is the total. Read in one pass, so the result is non-decreasing and consistent.
  // REQUIRES: bounds ascending.
  std::vector<uint64_t> CumulativeCounts(const std::vector<std::chrono::nanoseconds>& bounds) const;

  // Bucket geometry: index of the bucket holding "ns" (clamped to kMaxTrackable), and the
  // inclusive bounds of bucket "index".
  static int BucketIndex(uint64_t ns) {
    if (ns < static_cast<uint64_t>(kLinearBuckets)) return static_cast<int>(ns);
    if (ns > static_cast<uint64_t>(kMaxTrackable.count())) {
      ns = static_cast<uint64_t>(kMaxTrackable.count());
    }
    const int k = 63 - std::countl_zero(ns);  // 2^k <= ns < 2^(k+1), k >= 8
    const int sub = static_cast<int>((ns >> (k - kSubBucketBits)) & (kSubBuckets - 1));
    return kLinearBuckets + (k - 8) * kSubBuckets + sub;
  }
  static uint64_t BucketLowerBound(int index);
  static uint64_t BucketUpperBound(int index);

 private:
  std::unique_ptr<std::atomic<uint64_t>[]> buckets_;  // kNumBuckets
  std::atomic<uint64_t> sum_ns_{0};
  std::atomic<uint64_t> min_ns_{std::numeric_limits<uint64_t>::max()};
  std::atomic<uint64_t> max_ns_{0};
};

}  // namespace vigil

#endif  // VIGIL_METRICS_LATENCY_HISTOGRAM_H_
