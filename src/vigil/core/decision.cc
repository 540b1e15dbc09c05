#include "vigil/core/decision.h"

namespace vigil {

absl::string_view ActionName(Action a) {
  switch (a) {
    case Action::kAllow: return "ALLOW";
    case Action::kReview: return "REVIEW";
    case Action::kBlock: return "BLOCK";
  }
  return "ALLOW";
}

}  // namespace vigil
