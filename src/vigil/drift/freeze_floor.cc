#include "vigil/drift/freeze_floor.h"

#include <cmath>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace vigil::drift {

bool ApplyFreezeFloor(double review_threshold, double frozen_score, Decision& decision) {
  if (std::isnan(frozen_score) || frozen_score < review_threshold ||
      decision.action != Action::kAllow) {
    return false;
  }
  decision.action = Action::kReview;
  Reason reason;
  reason.kind = Reason::Kind::kRule;
  reason.code = std::string(kFreezeFloorCode);
  reason.text = absl::StrCat("held for review while drift freezes the model: the frozen model "
                             "scored ", frozen_score, ", at or above the review threshold ",
                             review_threshold);
  decision.reasons.push_back(std::move(reason));
  return true;
}

}  // namespace vigil::drift
