// CaseEvent: one thing an analyst or a supervisor did to a case (docs/cases.md). Every event
// is recorded in the decision log as an event record (source "cases") before it takes effect,
// so the log holds, in one order, the decisions that raised the alerts and everything done
// about them; a case's state is what its events, applied in log order, make it.
#ifndef VIGIL_CASES_CASE_EVENT_H_
#define VIGIL_CASES_CASE_EVENT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "vigil/core/transaction.h"

namespace vigil::cases {

// The source of the log's event records that are case events.
inline constexpr char kCaseEventSource[] = "cases";

enum class CaseEventKind : uint8_t {
  kClaim,         // the actor takes the case: in review, locked to them
  kRelease,       // the owner gives it back to the queue
  kAssign,        // a supervisor gives it to "assignee" (empty: back to the queue)
  kNote,          // "text" added to the case
  kEscalate,      // the owner passes it to the supervisors ("text": why)
  kProposeClose,  // the owner closes with "outcome" and "text"; a second analyst must approve
  kApproveClose,  // another analyst approves the proposed closing: closed
  kRejectClose,   // another analyst sends it back to the proposer ("text": why)
  kClose,         // the owner closes with "outcome" and "text" (no second analyst needed)
  kReopen,        // a closed case back in the queue ("text": why)
  kReviewHit,     // the owner's verdict on one screening hit of an alert ("text": why)
  kAttach,        // a file added to the case (its name, type, size and SHA-256; "text": what)
};

// An analyst's verdict on a screening hit (docs/cases.md, "Screening hits").
enum class HitVerdict : uint8_t {
  kNone,
  kTrueMatch,   // the party is the listed entry
  kFalseMatch,  // it is not, this time
  kCleared,     // it is not, and later hits of the entry on the party count for nothing until
                // "expires" (screening::ScreeningClearances)
};

// How a closed case ended: the bank's label of its alerts.
enum class CaseOutcome : uint8_t {
  kNone,                // not closed
  kSuspiciousReported,  // suspicious: a report was filed
  kNotSuspicious,       // looked at, explained, nothing to report
  kFalsePositive,       // the alert should not have been raised
  kValuableAlert,       // worth raising, not reportable
};

std::string_view CaseEventKindName(CaseEventKind kind);  // "claim", "propose_close", ...
absl::StatusOr<CaseEventKind> ParseCaseEventKind(std::string_view name);
std::string_view HitVerdictName(HitVerdict verdict);  // "true_match", "false_match", "cleared"
absl::StatusOr<HitVerdict> ParseHitVerdict(std::string_view name);
std::string_view CaseOutcomeName(CaseOutcome outcome);  // "suspicious_reported", ...
// One of the four outcomes of a closed case (kNone is refused), naming the accepted values.
absl::StatusOr<CaseOutcome> ParseCaseOutcome(std::string_view name);
// Whether a case closed so is a laundering label (suspicious_reported).
bool IsSuspicious(CaseOutcome outcome);

struct CaseEvent {
  CaseEventKind kind = CaseEventKind::kNote;
  std::string case_id;
  std::string actor;  // who did it (the token's subject)
  UtcTime at{};
  std::string assignee;                      // kAssign
  std::string text;                          // kNote, kEscalate, the closings, kReopen
  CaseOutcome outcome = CaseOutcome::kNone;  // kProposeClose, kClose
  // kReviewHit: the alert's record (its log sequence), the hit's code ("<list>:<entry id>"),
  // the party it was on (screening::ScreenedParty), the verdict, and for kCleared its end.
  uint64_t alert = 0;
  std::string hit, party;
  HitVerdict verdict = HitVerdict::kNone;
  UtcTime expires{};
  // kAttach: the file as the analyst named it, its media type, size and SHA-256 (lower-case
  // hex); the bytes are kept in the book's store under that digest.
  std::string file_name, media_type, sha256;
  uint64_t size = 0;
  uint64_t sequence = 0;                     // its record in the decision log (set when read back)
};

// Limits of an event's text fields, in bytes.
inline constexpr size_t kMaxCaseText = 16 * 1024;
inline constexpr size_t kMaxCaseName = 256;
// The media types an attachment may have: documents and images an analyst collects.
inline constexpr std::string_view kAttachmentMediaTypes[] = {
    "application/pdf", "image/png", "image/jpeg", "text/plain", "text/csv"};
bool IsAttachmentMediaType(std::string_view media_type);

// The event as the log's event record holds it: JSON with "source": "cases", canonical (the
// same event gives the same bytes).
std::string CaseEventToJson(const CaseEvent& event);
// The event of an event record's JSON; kInvalidArgument naming the field when it is not a
// well-formed case event (a wrong kind, a missing case id, an outcome on a note, ...).
absl::StatusOr<CaseEvent> CaseEventFromJson(std::string_view json);

}  // namespace vigil::cases

#endif  // VIGIL_CASES_CASE_EVENT_H_
