// CellLayout: the cells a subject's values are counted in for the binned statistics of the
// drift monitor — missing, below the reference's range, the reference's quantile bins, above
// its range — with the reference's count in each.
//
// Why more than the quantile bins: a surge of missing values, or values the training data never
// had (a one-hot category that was always 0, an amount beyond the largest seen), must move the
// histogram; clamped into the end bins, or into the single bin of a constant feature, they
// would be invisible. The reference has no value outside its range and its own missing count,
// so those cells carry real information both ways.
//
//   cell 0      missing (NaN)
//   cell 1      x < first edge
//   cells 2..   the reference bins (numpy.histogram's rule; a constant reference: x == v)
//   last cell   x > last edge
//
// A feature with no present value in training has the cells {missing, present}.
//
// Thread safety: immutable after construction.
#ifndef VIGIL_DRIFT_CELL_LAYOUT_H_
#define VIGIL_DRIFT_CELL_LAYOUT_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "vigil/drift/reference_profile.h"

namespace vigil::drift {

class CellLayout {
 public:
  explicit CellLayout(const FeatureReference& reference);

  size_t size() const { return reference_counts_.size(); }
  uint32_t Cell(double x) const;
  // The reference's count per cell (0 outside its range).
  const std::vector<double>& reference_counts() const { return reference_counts_; }

 private:
  std::vector<double> edges_;  // empty: no present value in the reference
  std::vector<double> reference_counts_;
};

}  // namespace vigil::drift

#endif  // VIGIL_DRIFT_CELL_LAYOUT_H_
