// Case: a subject's alerts within a window, worked as one by an analyst (docs/cases.md), and
// the rules of how it moves: open → in review (claimed: locked to its owner) → escalated →
// awaiting approval (four eyes) → closed with an outcome; reopened. A case is what its alerts
// and events, applied in the decision log's order, make it: CheckCaseEvent says whether an
// event may happen now, ApplyCaseEvent and AddAlert change the case and nothing else.
#ifndef VIGIL_CASES_CASE_FILE_H_
#define VIGIL_CASES_CASE_FILE_H_

#include <chrono>
#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "vigil/cases/alert.h"
#include "vigil/cases/case_event.h"
#include "vigil/core/transaction.h"

namespace vigil::cases {

enum class CaseState : uint8_t { kOpen, kInReview, kEscalated, kAwaitingApproval, kClosed };

std::string_view CaseStateName(CaseState state);  // "open", "in_review", ...
absl::StatusOr<CaseState> ParseCaseState(std::string_view name);

// What the person acting may do: an analyst works cases; a supervisor also assigns them,
// works escalated ones and reopens closed ones.
enum class CaseRole : uint8_t { kAnalyst, kSupervisor };

// How cases are formed and worked.
struct CasePolicy {
  // An alert joins its subject's case that is not closed when the case's first payment is at
  // most this long before the alert's; otherwise it opens a new case.
  std::chrono::seconds window = std::chrono::hours(24 * 30);
  // How long a case may stay unclosed: its priority grows with its age up to this, and a case
  // older than it is overdue.
  std::chrono::seconds sla = std::chrono::hours(24 * 5);
  // Closing a case that holds a BLOCK needs a second analyst's approval.
  bool four_eyes_block = true;
  // Closing any case as suspicious_reported needs a second analyst's approval.
  bool four_eyes_suspicious = true;
};

// The longest a screening clearance may run (CaseEventKind::kReviewHit, kCleared).
inline constexpr std::chrono::hours kMaxClearance{24 * 366};

// Distinct reason codes kept per case (the first ones met).
inline constexpr size_t kMaxCaseReasons = 32;

struct Case {
  std::string id;       // "case-<the log sequence of its first alert>"
  std::string subject;  // the account
  std::string subject_name;
  CaseState state = CaseState::kOpen;
  std::string owner;                         // who holds it; "" in the queue
  CaseOutcome outcome = CaseOutcome::kNone;  // closed, or proposed while awaiting approval
  std::string rationale;                     // the closing's (or proposal's) text
  std::string proposed_by;                   // awaiting approval: who proposed the closing
  std::string closed_by, approved_by;
  UtcTime opened{};  // its first alert decided
  UtcTime updated{};
  UtcTime closed_at{};
  UtcTime first_payment{}, last_payment{};  // its alerts' event times
  uint64_t alerts = 0;
  uint64_t blocks = 0;
  uint64_t screening_hits = 0;  // alerts with a watchlist hit
  double max_score = std::nan("");
  int max_severity = 0;  // of its alerts' rules (Alert::severity): what typology they flag
  int64_t amount_reporting_micros = 0;  // its alerts' amounts, reporting currency
  std::vector<std::string> reasons;     // distinct rule ids and list hits, first met first
  uint32_t notes = 0;
  uint32_t attachments = 0;
  uint32_t reopened = 0;
  uint64_t last_sequence = 0;  // the last log record that changed it

  bool closed() const { return state == CaseState::kClosed; }
};

// Whether "alert" belongs in "c" under "policy" (same subject, not closed, in the window).
bool Accepts(const Case& c, const Alert& alert, const CasePolicy& policy);
// A new case opened by "alert".
Case OpenCase(const Alert& alert);
// "alert" added to "c" (Accepts held).
void AddAlert(Case& c, const Alert& alert);

// Whether "event" may happen to "c" now, done by someone of "role" (the event's actor):
// kFailedPrecondition naming the reason (claimed by another, not the owner, the proposer
// approving their own closing, a closed case, ...), kPermissionDenied for what only a
// supervisor may do, kInvalidArgument for a missing rationale or assignee.
absl::Status CheckCaseEvent(const Case& c, const CaseEvent& event, CaseRole role);
// "event" applied to "c" (CheckCaseEvent held when it was recorded).
void ApplyCaseEvent(Case& c, const CaseEvent& event);
// Whether closing "c" with "outcome" needs a second analyst under "policy".
bool NeedsSecondAnalyst(const Case& c, CaseOutcome outcome, const CasePolicy& policy);

// The case's priority at "now", 0 to 100, higher first (docs/cases.md, "Priority"): its
// highest model score (up to 30), the highest severity of its rules (up to 10: severity / 10),
// its alerts' amount in the reporting currency (up to 20: 5 a decade above 1,000), a BLOCK
// among them (10), its number of alerts (up to 10), and its age against the SLA (up to 20,
// reached at the SLA).
double CasePriority(const Case& c, UtcTime now, const CasePolicy& policy);
// Whether "c" is unclosed past its SLA at "now".
bool Overdue(const Case& c, UtcTime now, const CasePolicy& policy);

// The case as stored (JSON), and back; kDataLoss naming the field when stored bytes do not
// parse.
std::string CaseToJson(const Case& c);
absl::StatusOr<Case> CaseFromJson(std::string_view json);
// The alert as stored (JSON), and back.
std::string AlertToJson(const Alert& a);
absl::StatusOr<Alert> AlertFromJson(std::string_view json);

}  // namespace vigil::cases

#endif  // VIGIL_CASES_CASE_FILE_H_
