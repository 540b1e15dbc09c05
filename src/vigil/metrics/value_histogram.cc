#include "vigil/metrics/value_histogram.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace vigil {

absl::Status ValueHistogram::ValidateBounds(const std::vector<double>& bounds) {
  if (bounds.empty()) {
    return absl::InvalidArgumentError("histogram bucket bounds are empty (+Inf is implied)");
  }
  for (size_t i = 0; i < bounds.size(); ++i) {
    if (!std::isfinite(bounds[i])) {
      return absl::InvalidArgumentError(
          absl::StrCat("histogram bucket bound ", i, " is ", bounds[i], ": bounds must be finite"));
    }
    if (i > 0 && !(bounds[i] > bounds[i - 1])) {
      return absl::InvalidArgumentError(
          absl::StrCat("histogram bucket bound ", i, " (", bounds[i], ") is not above bound ",
                       i - 1, " (", bounds[i - 1], "): bounds must be strictly ascending"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<ValueHistogram>> ValueHistogram::Create(std::vector<double> bounds) {
  if (absl::Status s = ValidateBounds(bounds); !s.ok()) return s;
  return std::unique_ptr<ValueHistogram>(new ValueHistogram(std::move(bounds)));
}

ValueHistogram::ValueHistogram(std::vector<double> bounds)
    : bounds_(std::move(bounds)),
      buckets_(new std::atomic<uint64_t>[bounds_.size() + 1]()) {}  // value-initialized: zero

uint64_t ValueHistogram::count() const {
  uint64_t total = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) total += buckets_[i].load(std::memory_order_relaxed);
  return total;
}

std::vector<uint64_t> ValueHistogram::CumulativeCounts() const {
  std::vector<uint64_t> counts(bounds_.size() + 1);
  uint64_t running = 0;
  for (size_t i = 0; i <= bounds_.size(); ++i) {
    running += buckets_[i].load(std::memory_order_relaxed);
    counts[i] = running;
  }
  return counts;
}

}  // namespace vigil
