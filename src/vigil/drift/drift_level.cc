#include "vigil/drift/drift_level.h"

#include "absl/strings/str_cat.h"

namespace vigil::drift {

std::string_view DriftLevelName(DriftLevel level) {
  switch (level) {
    case DriftLevel::kNone: return "none";
    case DriftLevel::kL1: return "L1";
    case DriftLevel::kL2: return "L2";
    case DriftLevel::kL3: return "L3";
  }
  return "none";
}

double LevelCutoffs::EnterAt(DriftLevel level) const {
  switch (level) {
    case DriftLevel::kNone: return 0;
    case DriftLevel::kL1: return l1;
    case DriftLevel::kL2: return l2;
    case DriftLevel::kL3: return l3;
  }
  return 0;
}

absl::Status LevelCutoffs::Validate() const {
  if (!(l1 > 0 && l1 < l2)) {
    return absl::InvalidArgumentError(absl::StrCat("levels.l1 (", l1, ") must be in (0, l2)"));
  }
  if (!(l2 < l3 && l3 <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("levels.l2 and levels.l3 (", l2, ", ", l3, ") must satisfy l2 < l3 <= 1"));
  }
  if (!(release_margin >= 0 && release_margin < l1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("levels.release_margin (", release_margin, ") must be in [0, l1)"));
  }
  if (release_after < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("levels.release_after (", release_after, ") must be at least 1"));
  }
  return absl::OkStatus();
}

std::optional<LevelChange> LevelTracker::Observe(double severity, UtcTime t) {
  DriftLevel reached = DriftLevel::kNone;
  for (DriftLevel l : {DriftLevel::kL1, DriftLevel::kL2, DriftLevel::kL3}) {
    if (severity >= cutoffs_->EnterAt(l)) reached = l;
  }
  if (reached > level_) {
    below_ = 0;
    return Raise(reached, t);
  }
  if (level_ == DriftLevel::kNone) return std::nullopt;
  if (severity < cutoffs_->EnterAt(level_) - cutoffs_->release_margin) {
    if (++below_ >= cutoffs_->release_after) {
      below_ = 0;
      const LevelChange change{level_, static_cast<DriftLevel>(static_cast<int>(level_) - 1)};
      level_ = change.to;
      return change;
    }
  } else {
    below_ = 0;
  }
  return std::nullopt;
}

std::optional<LevelChange> LevelTracker::Raise(DriftLevel level, UtcTime t) {
  if (level <= level_) return std::nullopt;
  below_ = 0;
  if (min_dwell_.count() > 0) {
    // One step at a time; after the first, only a dwell after the previous rise.
    if (level_ != DriftLevel::kNone && t - last_rise_ < min_dwell_) return std::nullopt;
    level = static_cast<DriftLevel>(static_cast<int>(level_) + 1);
  }
  const LevelChange change{level_, level};
  level_ = level;
  last_rise_ = t;
  return change;
}

std::optional<LevelChange> LevelTracker::Lower(DriftLevel level) {
  if (level >= level_) return std::nullopt;
  const LevelChange change{level_, level};
  level_ = level;
  below_ = 0;
  return change;
}

}  // namespace vigil::drift
