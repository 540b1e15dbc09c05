#include "vigil/drift/binned.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace vigil::drift {

absl::StatusOr<ReferenceBins> ReferenceBins::Create(std::vector<double> edges,
                                                    std::vector<double> counts) {
  if (edges.size() < 2 || counts.size() + 1 != edges.size()) {
    return absl::InvalidArgumentError(absl::StrCat("bins: ", edges.size(), " edges and ",
                                                   counts.size(),
                                                   " counts (expected k + 1 edges for k >= 1 "
                                                   "counts)"));
  }
  // One closed bin [v, v] is a constant reference (tools/train.py writes it so).
  const bool constant = edges.size() == 2 && edges[0] == edges[1];
  for (size_t i = 0; i < edges.size(); ++i) {
    if (!std::isfinite(edges[i]) || (i > 0 && !constant && !(edges[i] > edges[i - 1]))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "bins: edge ", i, " (", edges[i], ") must be finite and above the previous edge"));
    }
  }
  for (size_t i = 0; i < counts.size(); ++i) {
    if (!(counts[i] >= 0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("bins: count ", i, " (", counts[i], ") must be a number >= 0"));
    }
  }
  return ReferenceBins(std::move(edges), std::move(counts));
}

size_t ReferenceBins::Bin(double x) const {
  // Bin i holds [e_i, e_{i+1}); the last also holds its upper edge.
  const auto it = std::upper_bound(edges_.begin(), edges_.end(), x);
  const size_t upper = static_cast<size_t>(it - edges_.begin());  // edges <= x
  if (upper == 0) return 0;
  return std::min(upper - 1, counts_.size() - 1);
}

Divergences BinnedDivergences(absl::Span<const double> ref, absl::Span<const double> live,
                              double pseudo_count) {
  const size_t k = ref.size();
  double ref_total = 0, live_total = 0;
  for (size_t i = 0; i < k; ++i) {
    ref_total += ref[i];
    live_total += live[i];
  }
  const double ref_norm = ref_total + static_cast<double>(k) * pseudo_count;
  const double live_norm = live_total + static_cast<double>(k) * pseudo_count;
  Divergences d;
  double js = 0;
  for (size_t i = 0; i < k; ++i) {
    const double p = (ref[i] + pseudo_count) / ref_norm;
    const double q = (live[i] + pseudo_count) / live_norm;
    const double log_ratio = std::log(q / p);
    d.kl += q * log_ratio;
    d.psi += (q - p) * log_ratio;
    const double mid = 0.5 * (p + q);
    js += p * std::log(p / mid) + q * std::log(q / mid);
  }
  d.js = std::sqrt(std::max(0.0, js / 2));
  return d;
}

}  // namespace vigil::drift
