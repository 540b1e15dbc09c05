// BuildReferenceProfile: the reference profile of a training set (ReferenceProfile's JSON, the
// form tools/train.py writes), so that `vigil model train` leaves beside its model what the
// drift monitor compares live traffic with.
//
// Per column, over its values: count and missing (NaN); of the present values the decile bin
// edges (linear-interpolated quantiles, duplicates merged; a constant column has the one bin
// [v, v]), the counts per bin (each bin [e_i, e_i+1), the last closed), mean, population
// standard deviation, an evenly spaced sorted sample of at most kProfileSample values, and,
// with event times, the dispersion per window length: for windows of 60 s .. 1 day of event
// time (of at least 5 rows; a length with fewer than 20 such windows is left out), the 95th
// percentile of each window's Pearson statistic against the whole period's cells (missing and
// the bins) over k - 1, divided by chi-square's own 95th percentile of that ratio, at least 1.
// The figures agree with tools/train.py's numpy and scipy (profile_builder_test.cc).
//
// Thread safety: pure functions.
#ifndef VIGIL_DRIFT_PROFILE_BUILDER_H_
#define VIGIL_DRIFT_PROFILE_BUILDER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/types/span.h"

namespace vigil::drift {

inline constexpr int kProfileBins = 10;
inline constexpr size_t kProfileSample = 2000;

// One entry ("features"' member or "score") as JSON text. "seconds": each value's event time
// in seconds, or empty (no dispersion). REQUIRES: seconds empty or seconds.size() == values.size().
std::string ProfileEntryJson(absl::Span<const double> values, absl::Span<const int64_t> seconds);

// The whole profile: "names" are the columns of the row-major "rows" (rows.size() a multiple of
// names.size()), "seconds" each row's event time; "score" (with "score_seconds") the model's
// scores on rows it did not train on, or empty (no score entry).
std::string ReferenceProfileJson(std::string_view schema_version,
                                 const std::vector<std::string>& names,
                                 absl::Span<const double> rows, absl::Span<const int64_t> seconds,
                                 absl::Span<const double> score,
                                 absl::Span<const int64_t> score_seconds);

}  // namespace vigil::drift

#endif  // VIGIL_DRIFT_PROFILE_BUILDER_H_
