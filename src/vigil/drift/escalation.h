// EscalationMatcher: a small pattern matcher over one subject's stream of severities that
// raises a critical event when drift is not only high but rising fast — by default a severity
// above 0.7 followed, within 30 s of event time, by one above 0.85.
//
// A pattern is a sequence of steps; step i (i >= 1) matches an evaluation with severity above
// its threshold that comes strictly later than, and at most `within` after, the latest match of
// step i - 1. When the last step matches the pattern completes, is reported once, and the
// matcher starts afresh. Keeping only the latest time each step matched is enough: a later
// earlier-step match can only widen the chance of the next step arriving in time.
//
// Thread safety: not synchronized (one per subject, owned by the monitor).
#ifndef VIGIL_DRIFT_ESCALATION_H_
#define VIGIL_DRIFT_ESCALATION_H_

#include <chrono>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "vigil/common/clock.h"

namespace vigil::drift {

struct EscalationStep {
  double above = 0;  // severity strictly above this
  // For steps after the first: at most this long after the previous step's match.
  std::chrono::microseconds within{0};
};

struct EscalationPattern {
  std::vector<EscalationStep> steps = {{0.7, std::chrono::seconds(0)},
                                       {0.85, std::chrono::seconds(30)}};
  // OK when there are >= 2 steps, thresholds in [0, 1), and windows after the first positive.
  // An empty pattern turns escalation off and is also OK.
  absl::Status Validate() const;
};

class EscalationMatcher {
 public:
  explicit EscalationMatcher(const EscalationPattern* pattern)
      : pattern_(pattern), matched_(pattern->steps.size()) {}

  // One evaluation at event time "t" (non-decreasing per subject). True when it completes the
  // pattern.
  bool Observe(UtcTime t, double severity);

 private:
  const EscalationPattern* pattern_;
  std::vector<std::optional<UtcTime>> matched_;  // latest match time per step
};

}  // namespace vigil::drift

#endif  // VIGIL_DRIFT_ESCALATION_H_
