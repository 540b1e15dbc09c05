#include "vigil/cases/alert.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace vigil::cases {

absl::StatusOr<std::optional<Alert>> AlertOf(const audit::AuditRecord& record, uint64_t sequence,
                                             const FxRates* fx) {
  if (!record.event.empty()) return std::optional<Alert>();
  const Decision& d = record.decision;
  if (d.action == Action::kAllow) return std::optional<Alert>();
  if (!record.sealed.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("record ", sequence, " (transaction ", record.transaction.id,
                     ") has its personal fields sealed under data key ", record.data_key_id,
                     ": cases read the accounts of alerts and need the log written in the clear"));
  }
  Alert a;
  a.sequence = sequence;
  a.transaction_id = record.transaction.id;
  a.event_time = record.transaction.event_time;
  a.decided = record.decided;
  a.action = d.action;
  a.score = d.score;
  a.subject = record.transaction.originator.account_id;
  a.counterparty = record.transaction.beneficiary.account_id;
  a.subject_name = record.transaction.originator.name;
  a.counterparty_name = record.transaction.beneficiary.name;
  a.amount = record.transaction.amount;
  if (fx != nullptr) {
    absl::StatusOr<int64_t> reporting = fx->ToReportingMicros(a.amount);
    if (reporting.ok()) a.amount_reporting_micros = *reporting;
  }
  for (const Reason& r : d.reasons) {
    if (r.shadow || r.kind == Reason::Kind::kModel) continue;
    if (r.kind == Reason::Kind::kScreening) a.screening_hit = true;
    if (a.reasons.size() < kMaxAlertReasons) a.reasons.push_back(r.code);
  }
  return std::optional<Alert>(std::move(a));
}

}  // namespace vigil::cases
