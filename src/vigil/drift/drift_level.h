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
// Thread safety: LevelTracker is not synchronized (one per subject and window, owned by the
// monitor).
#ifndef VIGIL_DRIFT_DRIFT_LEVEL_H_
#define VIGIL_DRIFT_DRIFT_LEVEL_H_

#include <optional>
#include <string_view>

#include "absl/status/status.h"

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
  explicit LevelTracker(const LevelCutoffs* cutoffs) : cutoffs_(cutoffs) {}

  // One evaluation's severity; returns the change when the level moved.
  std::optional<LevelChange> Observe(double severity);
  // Raises the level to at least "level" at once (an escalation); the usual hysteresis then
  // brings it down. Returns the change when the level moved.
  std::optional<LevelChange> Raise(DriftLevel level);

  DriftLevel level() const { return level_; }

 private:
  const LevelCutoffs* cutoffs_;
  DriftLevel level_ = DriftLevel::kNone;
  int below_ = 0;  // consecutive evaluations below the current level's release point
};

}  // namespace vigil::drift

#endif  // VIGIL_DRIFT_DRIFT_LEVEL_H_
