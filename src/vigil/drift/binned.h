// Divergences between a live window and the reference over the reference's quantile bins: KL
// divergence, Jensen–Shannon distance and the population stability index, as scipy computes
// them on the same probabilities (scipy.stats.entropy(live, ref), scipy.spatial.distance.
// jensenshannon(ref, live), natural logarithms).
//
// Smoothing: a bin with no values would make KL and PSI infinite, so every bin gets a
// pseudo-count (default 0.5, Jeffreys' prior) on both sides before normalising:
// p_i = (c_i + a) / (N + k a). The same smoothing is applied to the reference and the window,
// so two identical histograms still give exactly 0.
//
// Thread safety: ReferenceBins is immutable after Create; the functions are pure.
#ifndef VIGIL_DRIFT_BINNED_H_
#define VIGIL_DRIFT_BINNED_H_

#include <cstddef>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace vigil::drift {

class ReferenceBins {
 public:
  // "edges": k + 1 strictly ascending finite edges (numpy.histogram's: bins [e_i, e_{i+1}),
  // the last one closed), or two equal edges for a constant reference (one bin [v, v]);
  // "counts": k reference counts, none negative. Errors name the problem.
  static absl::StatusOr<ReferenceBins> Create(std::vector<double> edges,
                                              std::vector<double> counts);

  size_t size() const { return counts_.size(); }
  absl::Span<const double> edges() const { return edges_; }
  absl::Span<const double> counts() const { return counts_; }

  // The bin of x as numpy.histogram assigns it; values below the first edge go to the first
  // bin and above the last to the last (drift beyond the reference's range still counts).
  // REQUIRES: x is not NaN.
  size_t Bin(double x) const;

 private:
  ReferenceBins(std::vector<double> edges, std::vector<double> counts)
      : edges_(std::move(edges)), counts_(std::move(counts)) {}
  std::vector<double> edges_;
  std::vector<double> counts_;
};

struct Divergences {
  double kl = 0;   // KL(live || reference)
  double js = 0;   // Jensen–Shannon distance (the square root of the divergence)
  double psi = 0;  // Σ (live_i - ref_i) ln(live_i / ref_i)
};

// REQUIRES: ref.size() == live.size() >= 1, counts >= 0, pseudo_count > 0.
Divergences BinnedDivergences(absl::Span<const double> ref, absl::Span<const double> live,
                              double pseudo_count = 0.5);

}  // namespace vigil::drift

#endif  // VIGIL_DRIFT_BINNED_H_
