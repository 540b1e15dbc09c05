// NullCalibration: how large a subject's weighted drift score gets when nothing has drifted,
// for a window of n rows — so that a score can be turned into a calibrated severity that means
// the same for every feature and every window size.
//
// Why: the binned divergences of a small window are large from sampling noise alone (at 100
// rows the default score averages about 0.08 with no drift), and how large depends on the
// feature's bins; one raw cut-off for every feature and window would alarm all day on small
// windows and never on large ones.
//
// How: for a window of n rows, `windows` no-drift windows are drawn (multinomial over the
// reference's cells, with the reference's probabilities smoothed by the same pseudo-count as
// the statistics, so a value the training data never had is rare, not impossible) and scored
// exactly as live windows are. The survival function P(score >= s) is EmpiricalNull's: the
// empirical one up to the (1 - tail_fraction) quantile u; beyond u, where no simulation
// reaches the small probabilities alarms are set at, the exponential tail fitted to the
// exceedances over u (peaks over threshold, scale = their mean excess). The binned statistics are smooth
// functions of a chi-square-like count statistic whose tail is exponential; for chi-square
// with more than two degrees of freedom the mean excess shrinks further out, so the fit
// overstates tail probabilities: alarms come less often than targeted, not more.
// When fewer than 10 simulated scores exceed u (a nearly constant feature), the tail scale is
// the analytic one, (w_kl + 2 w_psi) / n: the chi-square tail's scale 2 carried through
// KL ≈ X / 2n and PSI ≈ X / n.
//
// Null distributions are simulated lazily per window size on a grid of sizes 2^(j/2) (8, 11,
// 16, 22, ...) and cached. A window of up to kCategoricalMaxRows rows (of at most
// kMaxAliasCells cells) is drawn row by row (Walker's alias method, two rows per 64 random
// bits), a larger one as conditional binomials (one per cell). Up to kTermTableMaxRows rows,
// its score is summed from per-cell tables of the divergence terms by count, each entry
// computed the first time a count occurs (Measure's arithmetic, without two logarithms per
// cell and window). Between grid sizes, each neighbour's distribution is read at the score
// rescaled by (n / n_grid)^gamma, gamma measured from the neighbours' mean scores, and log P
// interpolated linearly in log n.
//
// Thread safety: not synchronized (one per subject, owned by the monitor).
#ifndef VIGIL_DRIFT_NULL_CALIBRATION_H_
#define VIGIL_DRIFT_NULL_CALIBRATION_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "vigil/drift/binned.h"
#include "vigil/drift/empirical_null.h"

namespace vigil::drift {

// The weighted drift score: kl·KL + js·JS + psi·PSI.
struct DriftScoreWeights {
  double kl = 0.4;
  double js = 0.35;
  double psi = 0.25;

  double Score(const Divergences& d) const { return kl * d.kl + js * d.js + psi * d.psi; }
  // OK when every weight is finite, >= 0, and at least one is > 0.
  absl::Status Validate() const;
};

struct NullCalibrationOptions {
  int windows = 2000;          // no-drift windows simulated per window size
  double tail_fraction = 0.1;  // the share above u fitted by the exponential tail
  double pseudo_count = 0.5;   // the statistics' smoothing (binned.h)
  DriftScoreWeights weights;
  uint64_t seed = 1;
};

class NullCalibration {
 public:
  // "reference_counts": the subject's reference count per cell (CellLayout).
  NullCalibration(std::vector<double> reference_counts, NullCalibrationOptions options);

  // The divergences of a window's cell counts from the reference, the counts scaled to
  // "effective_rows" rows (Kish's size of a decayed window; their own total otherwise), and
  // their weighted score.
  Divergences Measure(absl::Span<const double> cells, double effective_rows) const;
  double Score(absl::Span<const double> cells, double effective_rows) const {
    return options_.weights.Score(Measure(cells, effective_rows));
  }

  // P(score >= s) under no drift for a window of "rows" rows (rows >= 1), in (0, 1].
  double Sf(double score, double rows);

  static constexpr int64_t kCategoricalMaxRows = 512;
  static constexpr size_t kMaxAliasCells = 64;  // more cells: binomials at every size
  static constexpr int64_t kTermTableMaxRows = 4096;

 private:
  const EmpiricalNull& NullFor(int grid);  // grid point j: n = round(2^(j/2))
  // One no-drift window of n rows: its count per cell.
  template <typename Rng>
  void DrawWindow(int64_t n, Rng& rng, std::vector<uint32_t>& counts) const;

  std::vector<double> reference_counts_;
  std::vector<double> probabilities_;  // smoothed reference probabilities
  std::vector<double> log_probabilities_;
  // Walker's alias table over the cells: column c keeps itself with odds keep_[c] / 2^32,
  // else gives alias_[c].
  std::vector<uint32_t> keep_;
  std::vector<uint32_t> alias_;
  NullCalibrationOptions options_;
  // By grid point (read per subject and evaluation: an index, not a tree walk).
  std::vector<std::unique_ptr<EmpiricalNull>> buckets_;
};

}  // namespace vigil::drift

#endif  // VIGIL_DRIFT_NULL_CALIBRATION_H_
