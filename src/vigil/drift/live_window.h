// LiveWindow: the recent rows of the monitored subjects (features, the model's score) on event
// time, for drift statistics — a window of `size` that slides every `slide` (defaults: 60 s
// every 10 s for the short window, 300 s every 60 s for the long one), in bounded memory
// whatever the traffic.
//
// The window is a ring of size/slide panes. Each pane counts, per subject, its rows exactly
// per cell (the caller's cells: missing, the reference's quantile bins, outside its range; see
// CellLayout) and keeps a uniform reservoir sample of at most `sample_rows_per_pane` rows (all
// subjects' values of a sampled row) for the two-sample statistics. A row older than the
// window's start is dropped and counted as late. Memory: panes × (Σ cells + sample rows ×
// subjects) numbers. A pane with more rows than its sample holds is subsampled, so the merged
// sample weighs a busy pane less than its share; the exact counts are not affected.
//
// Decay (optional, `decay_half_life` > 0): at Take, a pane's counts weigh 2^(-age/half_life),
// its age measured from the window's end to the pane's end, so recent traffic counts more and
// an old shift fades smoothly instead of falling off the edge. The effective row count of a
// decayed window is Kish's (Σ w n)² / Σ w² n, which is what its sampling noise corresponds to.
//
// Thread safety: externally synchronized.
#ifndef VIGIL_DRIFT_LIVE_WINDOW_H_
#define VIGIL_DRIFT_LIVE_WINDOW_H_

#include <chrono>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "vigil/common/clock.h"

namespace vigil::drift {

struct LiveWindowConfig {
  std::chrono::seconds size{60};
  std::chrono::seconds slide{10};
  std::chrono::seconds decay_half_life{0};  // 0: no decay
  size_t sample_rows_per_pane = 128;
  uint64_t seed = 1;  // the reservoirs' generator: a replay gives the same windows every time
};

class LiveWindow {
 public:
  // "cells_per_subject[s]": the number of cells subject s is counted in (>= 1). Errors: slide
  // not positive, size not a positive multiple of slide, decay negative, no subject, a subject
  // without cells, sample_rows_per_pane 0.
  static absl::StatusOr<LiveWindow> Create(LiveWindowConfig config,
                                           std::vector<size_t> cells_per_subject);

  // The pane event time "t" falls in (floor(t / slide)).
  int64_t PaneOf(UtcTime t) const;

  // Counts one row at event time "t": cells[s] is subject s's cell, values[s] its value (NaN:
  // missing). Panes rotate as event time moves forward. Returns false (and counts the row as
  // late) when "t" is before the window's start.
  bool Add(UtcTime t, absl::Span<const uint32_t> cells, absl::Span<const double> values);

  // The newest pane that has rows (INT64_MIN before the first row).
  int64_t newest_pane() const { return newest_; }
  // Rows in the panes (as_of - panes, as_of] (exact, unweighted).
  uint64_t RowsAsOf(int64_t as_of) const;

  struct Snapshot {
    UtcTime end{};       // the window covers [end - size, end)
    uint64_t rows = 0;   // rows counted (exact)
    double weight = 0;   // Σ pane weight × rows (= rows without decay)
    double effective_rows = 0;  // Kish's effective size (= rows without decay)
    std::vector<double> cells;  // weighted counts per cell
    std::vector<double> sample;  // the subject's present sampled values, sorted
  };
  // Subject "subject" over the panes (as_of - panes, as_of]; "with_sample" fills sample.
  Snapshot Take(size_t subject, int64_t as_of, bool with_sample) const;

  // Every subject at once over the panes (as_of - panes, as_of]: cells[offset(s) + c] is
  // subject s's weighted count of cell c (one pass over the panes, for evaluating all subjects).
  struct Totals {
    uint64_t rows = 0;
    double weight = 0;
    double effective_rows = 0;
    std::vector<double> cells;
  };
  void Sum(int64_t as_of, Totals& out) const;
  size_t offset(size_t subject) const { return offsets_[subject]; }

  size_t panes() const { return panes_.size(); }
  size_t subjects() const { return offsets_.size() - 1; }
  uint64_t late() const { return late_; }
  const LiveWindowConfig& config() const { return config_; }

 private:
  struct Pane {
    int64_t index = INT64_MIN;  // event time / slide
    uint64_t rows = 0;
    std::vector<double> counts;  // subject s's cells at [offsets_[s], offsets_[s + 1])
    std::vector<double> sample;  // sampled rows, subjects() values each
    size_t sampled = 0;
  };
  LiveWindow(LiveWindowConfig config, std::vector<size_t> offsets);
  uint64_t Next();
  double WeightOf(int64_t pane, int64_t as_of) const;

  LiveWindowConfig config_;
  int64_t slide_us_;
  std::vector<size_t> offsets_;
  std::vector<Pane> panes_;
  int64_t newest_ = INT64_MIN;
  uint64_t late_ = 0;
  uint64_t rng_;
};

}  // namespace vigil::drift

#endif  // VIGIL_DRIFT_LIVE_WINDOW_H_
