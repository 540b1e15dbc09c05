#include "vigil/drift/escalation.h"

#include "absl/strings/str_cat.h"

namespace vigil::drift {

absl::Status EscalationPattern::Validate() const {
  if (steps.empty()) return absl::OkStatus();
  if (steps.size() < 2) {
    return absl::InvalidArgumentError("escalation needs at least two steps (or none to turn it off)");
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    if (!(steps[i].above >= 0 && steps[i].above < 1)) {
      return absl::InvalidArgumentError(
          absl::StrCat("escalation step ", i + 1, ": 'above' (", steps[i].above,
                       ") must be in [0, 1)"));
    }
    if (i > 0 && steps[i].within.count() <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("escalation step ", i + 1, ": 'within' must be positive"));
    }
  }
  return absl::OkStatus();
}

bool EscalationMatcher::Observe(UtcTime t, double severity) {
  const auto& steps = pattern_->steps;
  if (steps.empty()) return false;
  // Later steps first, so one evaluation never matches two consecutive steps.
  for (size_t i = steps.size() - 1; i >= 1; --i) {
    const std::optional<UtcTime>& previous = matched_[i - 1];
    if (severity > steps[i].above && previous.has_value() && *previous < t &&
        t - *previous <= steps[i].within) {
      if (i + 1 == steps.size()) {
        for (auto& m : matched_) m.reset();
        return true;
      }
      matched_[i] = t;
    }
  }
  if (severity > steps[0].above) matched_[0] = t;
  return false;
}

}  // namespace vigil::drift
