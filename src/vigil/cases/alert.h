// Alert: a REVIEW or BLOCK decision waiting for an analyst, as the decision log recorded it
// (docs/cases.md). Alerts are read from the log, not told by the pipeline: the log is the one
// record of what was decided, and every alert of a case can be proven in it.
#ifndef VIGIL_CASES_ALERT_H_
#define VIGIL_CASES_ALERT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "vigil/audit/audit_record.h"
#include "vigil/core/decision.h"
#include "vigil/core/fx_rates.h"
#include "vigil/core/money.h"
#include "vigil/core/transaction.h"

namespace vigil::cases {

// Reason codes kept per alert (the decision's first ones, in its order).
inline constexpr size_t kMaxAlertReasons = 16;

struct Alert {
  uint64_t sequence = 0;  // its decision's record in the log
  std::string transaction_id;
  UtcTime event_time{};  // when the payment happened
  UtcTime decided{};     // when vigil decided it
  Action action = Action::kReview;
  double score = 0;  // the model's probability; NaN when rules alone decided
  // The case's subject: the paying account. The beneficiary is the counterparty.
  std::string subject;
  std::string counterparty;
  std::string subject_name, counterparty_name;
  Money amount;
  // The amount in the reporting currency, in micro-units; 0 when the FX rates lack its
  // currency (the priority then leaves the amount out).
  int64_t amount_reporting_micros = 0;
  // The decision's rule ids and screening hits ("<list>:<entry>"), shadow rules left out.
  std::vector<std::string> reasons;
  bool screening_hit = false;
  // The highest severity (0..100, the policy's) among the rules that fired; 0 when the book
  // was given no severities (CaseBookOptions::rule_severity).
  int severity = 0;
};

// The alert of a decision record at "sequence": nullopt for an ALLOW (whatever a shadow model
// said) or an event record. kFailedPrecondition when the record's personal fields are sealed (the
// account ids cannot be read without the key-encryption key). "fx" may be null.
absl::StatusOr<std::optional<Alert>> AlertOf(const audit::AuditRecord& record, uint64_t sequence,
                                             const FxRates* fx);

}  // namespace vigil::cases

#endif  // VIGIL_CASES_ALERT_H_
