// AccountStanding: where one party's account stands after a decision, the unit AML teams work
// on. The features module keeps each account's risk over a window (features/account_risk.h);
// the decision carries both parties' standing and says when this payment raised an account
// alert; the audit log records it; the policy sets when an account alerts.
//
// Thread safety: plain value types.
#ifndef VIGIL_CORE_ACCOUNT_STANDING_H_
#define VIGIL_CORE_ACCOUNT_STANDING_H_

#include <cmath>
#include <cstdint>
#include <string_view>

namespace vigil {

// Why an account alert was raised.
enum class AccountAlertCause : uint8_t {
  kNone = 0,
  kScore = 1,     // the account's score reached the policy's alert score
  kRuleHits = 2,  // its payments on which an active rule fired reached the policy's count
};

std::string_view AccountAlertCauseName(AccountAlertCause c);  // "", "score", "rule_hits"

// When an account alerts (the policy's "accounts" section). A NaN score or a zero count turns
// that trigger off; both off, no account ever alerts.
struct AccountAlertThresholds {
  double score = std::nan("");
  uint32_t rule_hits = 0;
  bool enabled() const { return !std::isnan(score) || rule_hits > 0; }
};

struct AccountStanding {
  // The highest model score among the account's payments (sent or received) in its window,
  // this one included; NaN when none was scored (rules-only decisions).
  double score = std::nan("");
  // Its payments in the window on which at least one active rule fired, this one included.
  uint32_t rule_hits = 0;
  // This decision raised the account's alert (at most once per account per window).
  bool alert = false;
  AccountAlertCause cause = AccountAlertCause::kNone;  // kNone unless alert
};

}  // namespace vigil

#endif  // VIGIL_CORE_ACCOUNT_STANDING_H_
