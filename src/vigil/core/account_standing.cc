#include "vigil/core/account_standing.h"

namespace vigil {

std::string_view AccountAlertCauseName(AccountAlertCause c) {
  switch (c) {
    case AccountAlertCause::kNone: return "";
    case AccountAlertCause::kScore: return "score";
    case AccountAlertCause::kRuleHits: return "rule_hits";
  }
  return "";
}

}  // namespace vigil
