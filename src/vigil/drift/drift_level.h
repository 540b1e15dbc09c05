// Drift levels and their hysteresis.
//
// A subject (a feature, or the model's score) is at one of four levels, decided from its
// calibrated severity in [0, 1] (see null_calibration.h): L1 logs, L2 asks for a retrain, L3
// freezes the model (decisions rules-only, degraded, and a review ticket). The same cut-offs
// mean the same thing for every feature and window because severity is calibrated.
//
// Hysteresis: a level is entered as soon as severity reaches its cut-off (several levels at
// once if need be); it is left one step at a time, only after `release_after` consecutive
// evaluations below (cut-off − release_margin). So a severity hovering around a cut-off does
// not flap.
//
// Dwell (`min_dwell` > 0, on event time): a level then rises one step at a time, and each step
// after the first (none → L1) only once `min_dwell` has passed since the previous rise, the
// evidence holding meanwhile. A burst, however strong, that lasts less than the dwell reaches
// L1 at most; L3 (the freeze) needs the evidence to hold for twice the dwell. With 0, a
// level is entered as soon as severity reaches its cut-off, several levels at once if need be.
//
// Thread safety: LevelTracker is not synchronized (one per subject and window, owned by the
// monitor).
#ifndef VIGIL_DRIFT_DRIFT_LEVEL_H_
#define VIGIL_DRIFT_DRIFT_LEVEL_H_

#include <chrono>
#include <optional>
#include <string_view>

#include "absl/status/status.h"
#include "vigil/common/clock.h"

namespace vigil::drift {

enum class DriftLevel { kNone = 0, kL1 = 1, kL2 = 2, kL3 = 3 };

std::string_view DriftLevelName(DriftLevel level);  // "none", "L1", "L2", "L3"

struct LevelCutoffs {
  double l1 = 0.5;
  double l2 = 0.7;
  double l3 = 0.9;
  double release_margin = 0.1;
  int release_after = 3;  // consecutive evaluations below (cut-off − margin) to step down

  double EnterAt(DriftLevel level) const;  // the cut-off of L1..L3 (0 for kNone)
  // OK when 0 < l1 < l2 < l3 <= 1, 0 <= release_margin < l1, release_after >= 1; else names
  // the member.
  absl::Status Validate() const;
};

struct LevelChange {
  DriftLevel from, to;
};

class LevelTracker {
 public:
  // "*cutoffs" must outlive the tracker.
  explicit LevelTracker(const LevelCutoffs* cutoffs,
                        std::chrono::microseconds min_dwell = std::chrono::microseconds(0))
      : cutoffs_(cutoffs), min_dwell_(min_dwell) {}

  // One evaluation's severity at event time "t" (non-decreasing); returns the change when the
  // level moved.
  std::optional<LevelChange> Observe(double severity, UtcTime t = UtcTime{});
  // Raises the level towards "level" (an escalation): at once without a dwell, else one step
  // when the dwell allows; the usual hysteresis then brings it down. Returns the change when
  // the level moved.
  std::optional<LevelChange> Raise(DriftLevel level, UtcTime t = UtcTime{});
  // Lowers the level to "level" at once (an operator's release); no-op when not above it.
  std::optional<LevelChange> Lower(DriftLevel level);

  DriftLevel level() const { return level_; }

 private:
  const LevelCutoffs* cutoffs_;
  const std::chrono::microseconds min_dwell_;
  DriftLevel level_ = DriftLevel::kNone;
  int below_ = 0;  // consecutive evaluations below the current level's release point
  UtcTime last_rise_{};  // event time of the latest rise
};

}  // namespace vigil::drift

#endif  // VIGIL_DRIFT_DRIFT_LEVEL_H_
