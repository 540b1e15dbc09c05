// The fail-safe floor of a frozen model (docs/drift.md, "Fail-safe while frozen").
//
// While drift holds the model frozen, the deployment's rules decide alone (the model may no
// longer describe the traffic), but the frozen model is still scored, and what it would have
// raised must not quietly drop to ALLOW: a payment the rules allow whose frozen score is at or
// above the policy's review threshold is held for REVIEW, with a reason saying why. It is never
// blocked on the suspect model's word alone (a score above the block threshold is held for
// review too); what the rules review or block stays as they decided.
//
// Thread safety: a pure function.
#ifndef VIGIL_DRIFT_FREEZE_FLOOR_H_
#define VIGIL_DRIFT_FREEZE_FLOOR_H_

#include <string_view>

#include "vigil/core/decision.h"

namespace vigil::drift {

// The reason code the floor adds.
inline constexpr std::string_view kFreezeFloorCode = "drift_freeze_floor";

// Applies the floor to "decision" (decided by the rules alone): true when it raised the action
// to REVIEW. A NaN "frozen_score" (the frozen model could not score) changes nothing.
bool ApplyFreezeFloor(double review_threshold, double frozen_score, Decision& decision);

}  // namespace vigil::drift

#endif  // VIGIL_DRIFT_FREEZE_FLOOR_H_
