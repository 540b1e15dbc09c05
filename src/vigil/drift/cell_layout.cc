#include "vigil/drift/cell_layout.h"

#include <algorithm>
#include <cmath>

namespace vigil::drift {

CellLayout::CellLayout(const FeatureReference& reference) {
  reference_counts_.push_back(static_cast<double>(reference.missing));
  if (!reference.bins.has_value()) {
    reference_counts_.push_back(static_cast<double>(reference.count - reference.missing));
    return;
  }
  const auto edges = reference.bins->edges();
  edges_.assign(edges.begin(), edges.end());
  reference_counts_.push_back(0);  // below
  for (double c : reference.bins->counts()) reference_counts_.push_back(c);
  reference_counts_.push_back(0);  // above
}

uint32_t CellLayout::Cell(double x) const {
  if (std::isnan(x)) return 0;
  if (edges_.empty()) return 1;
  if (x < edges_.front()) return 1;
  if (x > edges_.back()) return static_cast<uint32_t>(reference_counts_.size() - 1);
  // numpy.histogram: bin i holds [e_i, e_{i+1}), the last bin [e_{k-1}, e_k]; a constant
  // reference has the edges {v, v} and one bin. Here e_0 <= x <= e_k: the bin is the number of
  // inner edges e_1 .. e_{k-1} at or below x (a branch-free count over at most a dozen edges
  // beats a binary search, and runs for every subject of every row).
  const size_t k = edges_.size() - 1;
  size_t bin = 0;
  for (size_t i = 1; i < k; ++i) bin += edges_[i] <= x;
  return static_cast<uint32_t>(2 + bin);
}

}  // namespace vigil::drift
