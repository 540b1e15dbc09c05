// Exact two-sample statistics of a live window against a training reference, as scipy computes
// them: the Kolmogorov–Smirnov statistic (scipy.stats.ks_2samp's `statistic`) and the
// Wasserstein-1 distance (scipy.stats.wasserstein_distance, unit weights).
//
// The reference is sorted once, with prefix sums; a window of m values against a reference of
// n then costs O(m log n) (the window sorted, one binary search per distinct window value), not
// the O(n + m) of merging both samples, so a large reference costs little per window.
//
// Thread safety: ReferenceSample is immutable after construction; the functions are pure.
#ifndef VIGIL_DRIFT_TWO_SAMPLE_H_
#define VIGIL_DRIFT_TWO_SAMPLE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/types/span.h"

namespace vigil::drift {

class ReferenceSample {
 public:
  // NaN values are dropped (counted in missing()); the rest are sorted.
  explicit ReferenceSample(std::vector<double> values);

  size_t size() const { return sorted_.size(); }
  size_t missing() const { return missing_; }
  absl::Span<const double> sorted() const { return sorted_; }
  double mean() const { return mean_; }
  double stddev() const { return stddev_; }  // population (ddof 0), as numpy.std

  size_t CountAtMost(double x) const;  // values <= x
  size_t CountBelow(double x) const;   // values < x
  // Sum of the k smallest values (k <= size()), in extended precision.
  long double SumOfSmallest(size_t k) const { return prefix_[k]; }

 private:
  std::vector<double> sorted_;
  std::vector<long double> prefix_;  // prefix_[k]: sum of sorted_[0..k)
  size_t missing_ = 0;
  double mean_ = 0, stddev_ = 0;
};

// sup_x |F_ref(x) - F_live(x)| over the values of both samples. "live" must be sorted
// ascending and free of NaN; both samples non-empty (else 0).
double KsStatistic(const ReferenceSample& ref, absl::Span<const double> live);

// ∫ |F_ref(x) - F_live(x)| dx. Same requirements.
double Wasserstein1(const ReferenceSample& ref, absl::Span<const double> live);

// The exact two-sided p-value of a KS statistic "d" between samples of sizes n1 and n2: the
// probability under the null that a random interleaving of the two samples (a lattice path
// from (0, 0) to (n1, n2)) leaves the band |x/n1 - y/n2| < d, as scipy.stats.ks_2samp computes
// it with method 'exact' (and with 'auto' when max(n1, n2) <= 10,000): d is first rounded to
// the lattice, h / lcm(n1, n2); equal sizes use the alternating-series form, others the
// normalised path count P(x, y) = (x P(x-1, y) + y P(x, y-1)) / (x + y) over the band.
// Costs O(max(n1, n2) · band). REQUIRES: n1, n2 >= 1, 0 <= d <= 1.
double KsPValueExact(uint64_t n1, uint64_t n2, double d);

// The two-sided p-value by scipy's ks_2samp(method='auto') rule: KsPValueExact when
// max(n1, n2) <= 10,000, else KolmogorovSf(round(n1 n2 / (n1 + n2)), d) (Smirnov's asymptotic
// use of the one-sample distribution). scipy falls back from exact to asymptotic when its path
// count overflows; the normalised count here does not overflow, so it stays exact.
double KsPValue(uint64_t n1, uint64_t n2, double d);

}  // namespace vigil::drift

#endif  // VIGIL_DRIFT_TWO_SAMPLE_H_
