// LiveWindow: the recent values of one feature on event time, for drift statistics — a window of
// `size` that slides every `slide` (defaults: 60 s every 10 s for the short window, 300 s every
// 60 s for the long one), in bounded memory whatever the traffic.
//
// The window is a ring of size/slide panes. Each pane counts its values exactly (present,
// missing, and per reference bin) and keeps a uniform reservoir sample of at most
// `sample_per_pane` values for the two-sample statistics; a value older than the window's start
// is dropped (counted as late). Memory: panes × (sample_per_pane + bins) numbers. A pane with
// more values than its sample holds is subsampled, so the merged sample weighs a busy pane less
// than its share; the exact counts (and the binned statistics) are not affected.
//
// Thread safety: externally synchronized (one window per feature per monitor thread).
#ifndef VIGIL_DRIFT_LIVE_WINDOW_H_
#define VIGIL_DRIFT_LIVE_WINDOW_H_

#include <chrono>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "vigil/common/clock.h"
#include "vigil/drift/binned.h"

namespace vigil::drift {

struct LiveWindowConfig {
  std::chrono::seconds size{60};
  std::chrono::seconds slide{10};
  size_t sample_per_pane = 512;
  uint64_t seed = 1;  // the reservoirs' generator: a replay gives the same windows every time
};

class LiveWindow {
 public:
  // "bins" must outlive the window. Errors: slide not positive, size not a positive multiple of
  // slide, sample_per_pane 0.
  static absl::StatusOr<LiveWindow> Create(LiveWindowConfig config, const ReferenceBins& bins);

  // Counts a value (NaN: missing) at event time "t". Event time moving forward rotates panes;
  // a value before the window's start is counted as late and dropped.
  void Add(UtcTime t, double value);

  struct Snapshot {
    UtcTime end{};              // the window covers [end - size, end)
    uint64_t present = 0;       // values counted (exact)
    uint64_t missing = 0;
    std::vector<double> bin_counts;  // exact, per reference bin
    std::vector<double> sample;      // sorted; at most panes × sample_per_pane values
  };
  // The window as of the latest pane boundary at or after the newest event.
  Snapshot Take() const;

  uint64_t late() const { return late_; }

 private:
  struct Pane {
    int64_t index = INT64_MIN;  // event time / slide
    uint64_t present = 0, missing = 0, seen = 0;
    std::vector<double> bins;
    std::vector<double> sample;
  };
  LiveWindow(LiveWindowConfig config, const ReferenceBins& bins);
  uint64_t Next();

  LiveWindowConfig config_;
  const ReferenceBins* bins_;
  std::vector<Pane> panes_;
  int64_t newest_ = INT64_MIN;  // newest pane index seen
  uint64_t late_ = 0;
  uint64_t rng_;
};

}  // namespace vigil::drift

#endif  // VIGIL_DRIFT_LIVE_WINDOW_H_
