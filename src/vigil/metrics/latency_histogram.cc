#include "vigil/metrics/latency_histogram.h"

#include <algorithm>
#include <cmath>

namespace vigil {

LatencyHistogram::LatencyHistogram()
    : buckets_(new std::atomic<uint64_t>[kNumBuckets]()) {}  // value-initialized: all zero

uint64_t LatencyHistogram::BucketLowerBound(int index) {
  if (index < kLinearBuckets) return static_cast<uint64_t>(index);
  const int k = 8 + (index - kLinearBuckets) / kSubBuckets;
  const uint64_t sub = static_cast<uint64_t>((index - kLinearBuckets) % kSubBuckets);
  return (uint64_t{1} << k) + (sub << (k - kSubBucketBits));
}

uint64_t LatencyHistogram::BucketUpperBound(int index) {
  if (index < kLinearBuckets) return static_cast<uint64_t>(index);
  const int k = 8 + (index - kLinearBuckets) / kSubBuckets;
  return BucketLowerBound(index) + (uint64_t{1} << (k - kSubBucketBits)) - 1;
}

void LatencyHistogram::Merge(const LatencyHistogram& other) {
  for (int i = 0; i < kNumBuckets; ++i) {
    const uint64_t n = other.buckets_[i].load(std::memory_order_relaxed);
    if (n != 0) buckets_[i].fetch_add(n, std::memory_order_relaxed);
  }
  sum_ns_.fetch_add(other.sum_ns_.load(std::memory_order_relaxed), std::memory_order_relaxed);
  const uint64_t other_min = other.min_ns_.load(std::memory_order_relaxed);
  uint64_t seen = min_ns_.load(std::memory_order_relaxed);
  while (other_min < seen &&
         !min_ns_.compare_exchange_weak(seen, other_min, std::memory_order_relaxed)) {
  }
  const uint64_t other_max = other.max_ns_.load(std::memory_order_relaxed);
  seen = max_ns_.load(std::memory_order_relaxed);
  while (other_max > seen &&
         !max_ns_.compare_exchange_weak(seen, other_max, std::memory_order_relaxed)) {
  }
}

uint64_t LatencyHistogram::count() const {
  uint64_t total = 0;
  for (int i = 0; i < kNumBuckets; ++i) total += buckets_[i].load(std::memory_order_relaxed);
  return total;
}

std::chrono::nanoseconds LatencyHistogram::min() const {
  const uint64_t v = min_ns_.load(std::memory_order_relaxed);
  return std::chrono::nanoseconds(
      v == std::numeric_limits<uint64_t>::max() ? 0 : static_cast<int64_t>(v));
}

std::chrono::nanoseconds LatencyHistogram::max() const {
  return std::chrono::nanoseconds(static_cast<int64_t>(max_ns_.load(std::memory_order_relaxed)));
}

std::chrono::nanoseconds LatencyHistogram::sum() const {
  return std::chrono::nanoseconds(static_cast<int64_t>(sum_ns_.load(std::memory_order_relaxed)));
}

std::chrono::duration<double, std::nano> LatencyHistogram::mean() const {
  const uint64_t n = count();
  if (n == 0) return std::chrono::duration<double, std::nano>(0);
  return std::chrono::duration<double, std::nano>(
      static_cast<double>(sum_ns_.load(std::memory_order_relaxed)) / static_cast<double>(n));
}

std::chrono::nanoseconds LatencyHistogram::Percentile(double p) const {
  if (!(p >= 0)) p = 0;  // also NaN
  if (p > 100) p = 100;
  const uint64_t total = count();
  if (total == 0) return std::chrono::nanoseconds(0);
  const double r = std::ceil(p / 100.0 * static_cast<double>(total));
  const uint64_t rank = r < 1 ? 1 : std::min(total, static_cast<uint64_t>(r));
  const uint64_t lo = static_cast<uint64_t>(min().count());
  const uint64_t hi = static_cast<uint64_t>(max().count());
  uint64_t seen = 0;
  for (int i = 0; i < kNumBuckets; ++i) {
    seen += buckets_[i].load(std::memory_order_relaxed);
    if (seen >= rank) {
      // The top bucket is open-ended (it also holds samples past kMaxTrackable): report max().
      const uint64_t upper = i == kNumBuckets - 1 ? hi : BucketUpperBound(i);
      return std::chrono::nanoseconds(static_cast<int64_t>(std::clamp(upper, lo, hi)));
    }
  }
  return max();  // unreachable unless buckets changed under us; max() is a safe answer
}

std::vector<uint64_t> LatencyHistogram::CumulativeCounts(
    const std::vector<std::chrono::nanoseconds>& bounds) const {
  std::vector<uint64_t> out(bounds.size() + 1, 0);
  size_t b = 0;
  uint64_t seen = 0;
  for (int i = 0; i < kNumBuckets; ++i) {
    const uint64_t n = buckets_[i].load(std::memory_order_relaxed);
    const uint64_t upper = BucketUpperBound(i);
    // Close every bound the next bucket would cross; the top bucket is open-ended.
    while (b < bounds.size() &&
           (bounds[b].count() < 0 || upper > static_cast<uint64_t>(bounds[b].count()) ||
            i == kNumBuckets - 1)) {
      out[b++] = seen;
    }
    seen += n;
  }
  while (b < bounds.size()) out[b++] = seen;
  out[bounds.size()] = seen;
  return out;
}

}  // namespace vigil
