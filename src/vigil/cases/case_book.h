// CaseBook: the cases of a decision log (docs/cases.md). It follows the log: each REVIEW or
// BLOCK decision becomes an alert in its subject's case (a new case when the subject has none
// within the window), and each case event recorded there changes its case. An analyst's
// action is checked against the case as it stands, recorded in the log as an event record
// (durable, in the Merkle tree, signed over by the next tree head), and only then applied: the
// log is the one record of what happened, and the cases are what it says.
//
// The book's state (cases, alerts, timelines, the log position it has applied) is kept in the
// column family "cases" of the log's store, each step written atomically with its position,
// so a restart goes on from where it stopped and applies nothing twice.
//
// Thread safety: every method may be called from any thread; actions are serialized.
#ifndef VIGIL_CASES_CASE_BOOK_H_
#define VIGIL_CASES_CASE_BOOK_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "vigil/audit/audit_log.h"
#include "vigil/cases/alert.h"
#include "vigil/cases/case_event.h"
#include "vigil/cases/case_file.h"
#include "vigil/cases/case_tally.h"
#include "vigil/common/clock.h"
#include "vigil/core/fx_rates.h"
#include "vigil/screening/screening_clearances.h"
#include "vigil/store/kv_store.h"

namespace vigil::cases {

// The store's column family the book keeps its state in.
inline constexpr char kCasesFamily[] = "cases";

struct CaseBookOptions {
  CasePolicy policy;
  // Amounts in the reporting currency (priority, totals); null: amounts left out.
  const FxRates* fx = nullptr;
  // How often the book follows the log on its own thread (0: only when asked, CatchUp).
  std::chrono::milliseconds follow_interval{500};
  // Where the book keeps the screening clearances its cases granted (loaded at open, changed
  // as review_hit events apply), for the decisions to consult; null: kept in the store only.
  std::shared_ptr<screening::ScreeningClearances> clearances;
  // The severity (0..100) of a rule by its id, from the policy in force; an alert's severity
  // is the highest of its rules' (a watchlist hit's code is no rule). Null: every severity 0.
  std::function<int(std::string_view rule_id)> rule_severity;
  // The largest attachment accepted, in bytes (the HTTP body limit bounds it too).
  size_t max_attachment_bytes = size_t{4} << 20;
};

struct CaseActor {
  std::string name;  // the token's subject
  CaseRole role = CaseRole::kAnalyst;
};

// What an actor asks to do to a case.
struct CaseAction {
  CaseEventKind kind = CaseEventKind::kNote;
  std::string case_id;
  std::string assignee;                      // kAssign
  std::string text;                          // note, reason or rationale
  CaseOutcome outcome = CaseOutcome::kNone;  // kClose (recorded as kProposeClose when four
                                             // eyes are needed)
  // kReviewHit: the alert (its log sequence) and the hit ("<list>:<entry id>") reviewed; the
  // book reads the party from the alert's record. "expires" for a kCleared verdict.
  uint64_t alert = 0;
  std::string hit;
  HitVerdict verdict = HitVerdict::kNone;
  UtcTime expires{};
  // kAttach: the file's name, media type (kAttachmentMediaTypes) and bytes.
  std::string file_name, media_type, content;
};

enum class CaseOrder : uint8_t { kPriority, kOpened, kUpdated, kAlerts };

// Which cases to list; every field set narrows it.
struct CaseQuery {
  std::optional<CaseState> state;
  bool unclosed = false;                       // every state but closed
  std::optional<std::string> owner;            // "" for the queue (held by nobody)
  std::string subject;                         // an account
  std::string reason;                          // a rule id or list hit among the case's reasons
  std::optional<double> min_score, max_score;  // the case's highest model score
  bool overdue = false;
  CaseOrder order = CaseOrder::kPriority;  // descending
  size_t offset = 0;
  size_t limit = 50;  // at most kMaxCasePage
};
inline constexpr size_t kMaxCasePage = 1000;

struct ListedCase {
  Case c;
  double priority = 0;
  bool overdue = false;
};

struct CasePage {
  std::vector<ListedCase> cases;
  size_t total = 0;  // matching the query, all pages
};

struct CaseBookStats {
  uint64_t applied = 0;  // log records applied (the next one read is this)
  uint64_t cases = 0;
  uint64_t open = 0;  // not closed
  uint64_t alerts = 0;
  uint64_t events = 0;
  uint64_t rejected_events = 0;  // event records in the log that did not apply (see CatchUp)
};

// A clearance as the book stores it and the API shows it: JSON with hit, party, expires, case,
// actor, reason and granted (RFC 3339).
std::string ClearanceToJson(const screening::ScreeningClearance& c);

// An attachment as CaseBook::Attachment answers it.
struct CaseAttachment {
  CaseEvent event;  // its kAttach event: name, media type, size, digest
  std::string bytes;
};

class CaseBook {
 public:
  // Opens the book over "log", whose store "store" has kCasesFamily. kFailedPrecondition when
  // the log seals personal fields (the book reads the alerts' accounts) or the family is
  // missing. "store", "log", "options.fx" and "clock" must outlive the book. Catches up with
  // the log before it returns.
  static absl::StatusOr<std::unique_ptr<CaseBook>> Open(KvStore* store, audit::AuditLog* log,
                                                        CaseBookOptions options,
                                                        const Clock& clock);
  ~CaseBook();
  CaseBook(const CaseBook&) = delete;
  CaseBook& operator=(const CaseBook&) = delete;

  // Applies the log's durable records past the book's position. An event record that does
  // not apply to its case as it stands (which the book's own actions never write) is counted
  // in rejected_events and left out. Errors: the log's read errors, kDataLoss for a record
  // that does not decode, store errors; the position stays at the record that failed.
  absl::Status CatchUp();

  // "action" by "actor": checked against the case (CheckCaseEvent), recorded in the log,
  // applied; the case as it then is. kNotFound for an unknown case; the errors of
  // CheckCaseEvent; the log's errors (nothing is applied then).
  absl::StatusOr<Case> Act(const CaseActor& actor, const CaseAction& action);
  // Claims the case of highest priority that "actor" may take (open; escalated too for a
  // supervisor). kNotFound when there is none.
  absl::StatusOr<Case> TakeNext(const CaseActor& actor);

  absl::StatusOr<Case> Get(const std::string& case_id) const;
  // The case's alerts in log order.
  absl::StatusOr<std::vector<Alert>> Alerts(const std::string& case_id) const;
  // The screening clearances the cases granted that hold now (the clock's).
  std::vector<screening::ScreeningClearance> Clearances() const;
  // The case's alert at log "sequence" (one key read). kNotFound for an unknown case, or a
  // sequence that is none of its alerts.
  absl::StatusOr<Alert> FindAlert(const std::string& case_id, uint64_t sequence) const;
  // The case's attachment whose SHA-256 is "sha256" (hex): its attach event and its bytes,
  // checked against the digest: kNotFound when the case has none such, kDataLoss when the
  // stored bytes do not match the digest its event recorded in the log.
  absl::StatusOr<CaseAttachment> Attachment(const std::string& case_id,
                                            const std::string& sha256) const;
  // The case's events in log order.
  absl::StatusOr<std::vector<CaseEvent>> Timeline(const std::string& case_id) const;
  // The cases matching "query" in its order, a page of them. kInvalidArgument for a limit
  // above kMaxCasePage.
  absl::StatusOr<CasePage> List(const CaseQuery& query) const;

  // Every case tallied at the clock's now (the dashboard's figures).
  CaseTallyReport Tally() const;

  CaseBookStats stats() const;
  // OK while the book follows the log; else why its last catch-up failed (it tries again).
  absl::Status health() const;
  const CasePolicy& policy() const { return options_.policy; }

 private:
  CaseBook(KvStore* store, audit::AuditLog* log, CaseBookOptions options, const Clock& clock);
  absl::Status Load();
  // The party of the screening hit "hit" on the case's alert "alert", read from its record;
  // kInvalidArgument naming the field when the alert is not the case's or holds no such hit.
  absl::StatusOr<std::string> HitParty(const std::string& case_id, uint64_t alert,
                                       const std::string& hit) const;
  absl::Status CatchUpLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // One action, "act_mu_" held (so no other action writes between its check and its record)
  // and "mu_" not: the durable append waits with the state unlocked, so reads and the
  // follower go on meanwhile.
  absl::StatusOr<Case> ActSerialized(const CaseActor& actor, const CaseAction& action)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(act_mu_) ABSL_LOCKS_EXCLUDED(mu_);
  void Follow();

  KvStore* const store_;
  audit::AuditLog* const log_;
  const CaseBookOptions options_;
  const Clock& clock_;

  // Serializes the actions (Act, TakeNext); taken before mu_. Only actions write case events,
  // so a check made under it still holds when its record is applied.
  absl::Mutex act_mu_ ABSL_ACQUIRED_BEFORE(mu_);
  mutable absl::Mutex mu_;
  uint64_t applied_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<std::string, Case> cases_ ABSL_GUARDED_BY(mu_);
  // Each subject's unclosed case, the one its next alert may join.
  absl::flat_hash_map<std::string, std::string> open_by_subject_ ABSL_GUARDED_BY(mu_);
  uint64_t alerts_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t events_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t rejected_events_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status health_ ABSL_GUARDED_BY(mu_);

  absl::Mutex stop_mu_;
  bool stop_ ABSL_GUARDED_BY(stop_mu_) = false;
  std::thread follower_;
};

}  // namespace vigil::cases

#endif  // VIGIL_CASES_CASE_BOOK_H_
