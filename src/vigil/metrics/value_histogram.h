// ValueHistogram: a Prometheus-style histogram of values that are not durations (batch sizes,
// model scores in [0, 1], queue depths at dequeue), with fixed bucket upper bounds chosen when it
// is created. Durations belong in LatencyHistogram, which keeps full resolution for percentiles;
// a ValueHistogram keeps only what a Prometheus histogram exports: one count per bucket, the
// total count and the sum.
//
//   VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<ValueHistogram> scores,
//                          ValueHistogram::Create({0.1, 0.25, 0.5, 0.75, 0.9}));
//   scores->Record(0.42);                // counted in the bucket le="0.5"
//   scores->CumulativeCounts();          // {0, 0, 1, 1, 1, 1}: one per bound, then +Inf
//
// Usually registered through MetricsRegistry::AddValueHistogram, which owns it and exports it.
//
// Buckets: bounds b[0] < b[1] < ... < b[n-1], all finite. A value v is counted in the first
// bucket with v <= b[i] (Prometheus `le`, "less than or equal"), or in the implicit +Inf bucket
// when v > b[n-1]. -Inf counts in the first bucket, +Inf in the +Inf bucket. NaN is ignored: it
// is counted nowhere and does not touch the sum (a NaN sum would hide every later value).
//
// Sum: a double updated with a compare-and-swap loop (std::atomic<double>::fetch_add), so it has
// the rounding of double addition (about 1e-16 relative per value) and, when threads record at
// once, the low bits depend on the order the additions land in. It becomes +Inf or -Inf after an
// infinite value (and NaN after both), as in the Prometheus client libraries. Fixed point was
// the alternative; it would need a unit and range per histogram, which a general value
// histogram does not have.
//
// Cost: Record is a binary search over the bounds (a few compares for the usual 5 to 20 bounds),
// one relaxed atomic add on the bucket, and the compare-and-swap on the sum.
//
// Thread safety: safe for concurrent use, lock-free: any number of threads may Record into and
// read one histogram at once. Readers do not see one atomic snapshot: a read that overlaps
// records may count a value in CumulativeCounts() before its sum() reflects it. The bounds are
// constant after construction. Many threads recording into one histogram share its cache lines;
// on a hot path across cores, give each worker its own histogram.
#ifndef VIGIL_METRICS_VALUE_HISTOGRAM_H_
#define VIGIL_METRICS_VALUE_HISTOGRAM_H_

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace vigil {

class ValueHistogram {
 public:
  // OK when "bounds" can be a histogram's bucket upper bounds: non-empty, every bound finite
  // (+Inf is always implied, never listed) and strictly ascending. Else kInvalidArgument naming
  // the first offending bound.
  static absl::Status ValidateBounds(const std::vector<double>& bounds);

  // A histogram with the given bucket upper bounds. Errors: as ValidateBounds.
  static absl::StatusOr<std::unique_ptr<ValueHistogram>> Create(std::vector<double> bounds);

  ValueHistogram(const ValueHistogram&) = delete;
  ValueHistogram& operator=(const ValueHistogram&) = delete;

  // Counts "value" in its bucket and adds it to the sum; NaN is ignored (see the file comment).
  void Record(double value) {
    if (std::isnan(value)) return;
    const size_t index = static_cast<size_t>(
        std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin());
    buckets_[index].fetch_add(1, std::memory_order_relaxed);
    sum_.fetch_add(value, std::memory_order_relaxed);
  }

  // The bucket upper bounds given at creation, without the implicit +Inf.
  const std::vector<double>& bounds() const { return bounds_; }

  // Number of recorded values (NaN excluded).
  uint64_t count() const;
  // Sum of the recorded values; 0 when empty.
  double sum() const { return sum_.load(std::memory_order_relaxed); }

  // bounds().size() + 1 elements: element i is the number of values <= bounds()[i]; the last is
  // the +Inf bucket, i.e. every value (equal to count() when nothing records meanwhile). Read
  // in one pass, so the result is non-decreasing and its last element is its own total.
  std::vector<uint64_t> CumulativeCounts() const;

 private:
  explicit ValueHistogram(std::vector<double> bounds);

  const std::vector<double> bounds_;
  // bounds_.size() + 1 per-bucket (not cumulative) counts; the last one is +Inf.
  const std::unique_ptr<std::atomic<uint64_t>[]> buckets_;
  std::atomic<double> sum_{0.0};
};

}  // namespace vigil

#endif  // VIGIL_METRICS_VALUE_HISTOGRAM_H_
