#include "vigil/cases/case_book.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"
#include "vigil/audit/audit_record.h"
#include "vigil/common/sha256.h"
#include "vigil/common/status_macros.h"
#include "vigil/common/string_view.h"

namespace vigil::cases {
namespace {

using Json = nlohmann::json;

constexpr char kPositionKey[] = "applied";
constexpr size_t kRecordsPerBatch = 512;

std::string CaseKey(std::string_view id) { return absl::StrCat("case/", ToAbsl(id)); }
std::string SubjectKey(std::string_view subject) {
  return absl::StrCat("subject/", ToAbsl(subject));
}
// Sequences zero-padded, so that a case's alerts and events list in log order.
std::string AlertKey(std::string_view id, uint64_t sequence) {
  return absl::StrFormat("alert/%s/%020d", ToAbsl(id), sequence);
}
std::string ClearanceKey(std::string_view hit, std::string_view party) {
  return absl::StrCat("clearance/", ToAbsl(hit), "\n", ToAbsl(party));
}

absl::StatusOr<screening::ScreeningClearance> ClearanceFromJson(std::string_view text) {
  const Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  screening::ScreeningClearance c;
  if (!j.is_object()) return absl::DataLossError("a stored clearance is not a JSON object");
  c.hit = j.value("hit", "");
  c.party = j.value("party", "");
  c.case_id = j.value("case", "");
  c.actor = j.value("actor", "");
  c.reason = j.value("reason", "");
  absl::StatusOr<UtcTime> expires = ParseRfc3339(j.value("expires", ""));
  absl::StatusOr<UtcTime> granted = ParseRfc3339(j.value("granted", ""));
  if (c.hit.empty() || c.party.empty() || !expires.ok() || !granted.ok()) {
    return absl::DataLossError(absl::StrCat("a stored clearance does not parse: ", ToAbsl(text)));
  }
  c.expires = *expires;
  c.granted = *granted;
  return c;
}

std::string AttachmentKey(std::string_view id, std::string_view sha256) {
  return absl::StrCat("attachment/", ToAbsl(id), "/", ToAbsl(sha256));
}

// A file name as an analyst may give it: one line of at most kMaxCaseName bytes, no path.
absl::Status CheckFileName(std::string_view name) {
  if (name.empty() || name.size() > kMaxCaseName ||
      name.find_first_of(std::string_view("/\\\r\n\t\0", 6)) != std::string_view::npos ||
      name == "." || name == "..") {
    return absl::InvalidArgumentError(
        absl::StrCat("\"name\": a file name of 1 to ", kMaxCaseName,
                     " bytes without slashes or control characters is required"));
  }
  return absl::OkStatus();
}

std::string EventKey(std::string_view id, uint64_t sequence) {
  return absl::StrFormat("event/%s/%020d", ToAbsl(id), sequence);
}

absl::Status CheckName(std::string_view field, std::string_view value) {
  if (value.size() > kMaxCaseName) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", ToAbsl(field), "\" is longer than ", kMaxCaseName, " bytes"));
  }
  return absl::OkStatus();
}

}  // namespace

std::string ClearanceToJson(const screening::ScreeningClearance& c) {
  return Json{{"hit", c.hit},
              {"party", c.party},
              {"expires", FormatUtc(c.expires)},
              {"case", c.case_id},
              {"actor", c.actor},
              {"reason", c.reason},
              {"granted", FormatUtc(c.granted)}}
      .dump();
}

CaseBook::CaseBook(KvStore* store, audit::AuditLog* log, CaseBookOptions options,
                   const Clock& clock)
    : store_(store), log_(log), options_(std::move(options)), clock_(clock) {}

absl::StatusOr<std::unique_ptr<CaseBook>> CaseBook::Open(KvStore* store, audit::AuditLog* log,
                                                         CaseBookOptions options,
                                                         const Clock& clock) {
  const std::vector<std::string> families = store->ColumnFamilies();
  if (std::find(families.begin(), families.end(), kCasesFamily) == families.end()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the store ", store->path(), " has no column family \"", kCasesFamily, "\" for cases"));
  }
  if (log->sealer() != nullptr) {
    return absl::FailedPreconditionError(
        "cases read the accounts of the decision log's alerts, and this log seals personal "
        "fields (audit.record_kek): cases need a log written in the clear");
  }
  std::unique_ptr<CaseBook> book(new CaseBook(store, log, std::move(options), clock));
  VIGIL_RETURN_IF_ERROR(book->Load());
  VIGIL_RETURN_IF_ERROR(book->CatchUp());
  if (book->options_.follow_interval.count() > 0) {
    book->follower_ = std::thread([b = book.get()] { b->Follow(); });
  }
  return book;
}

CaseBook::~CaseBook() {
  {
    absl::MutexLock lock(&stop_mu_);
    stop_ = true;
  }
  if (follower_.joinable()) follower_.join();
}

void CaseBook::Follow() {
  absl::MutexLock lock(&stop_mu_);
  while (!stop_) {
    const auto until = [this]() ABSL_SHARED_LOCKS_REQUIRED(stop_mu_) { return stop_; };
    stop_mu_.AwaitWithTimeout(absl::Condition(&until), absl::FromChrono(options_.follow_interval));
    if (stop_) break;
    stop_mu_.Unlock();
    CatchUp().IgnoreError();  // kept in health_; tried again next time
    stop_mu_.Lock();
  }
}

absl::Status CaseBook::Load() {
  absl::MutexLock lock(&mu_);
  VIGIL_ASSIGN_OR_RETURN(std::optional<std::string> position,
                         store_->Get(kCasesFamily, kPositionKey));
  if (position.has_value()) {
    const Json j = Json::parse(*position, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object() || !j.value("next", Json()).is_number_unsigned()) {
      return absl::DataLossError(
          absl::StrCat("the cases' position in ", store_->path(), " does not parse: ", *position));
    }
    applied_ = j["next"].get<uint64_t>();
    alerts_ = j.value("alerts", uint64_t{0});
    events_ = j.value("events", uint64_t{0});
    rejected_events_ = j.value("rejected", uint64_t{0});
  }
  VIGIL_RETURN_IF_ERROR(store_->ForEach(
      kCasesFamily, "case/", [&](absl::string_view, absl::string_view value) -> absl::Status {
        VIGIL_ASSIGN_OR_RETURN(Case c, CaseFromJson(ToStd(value)));
        std::string id = c.id;
        cases_.emplace(std::move(id), std::move(c));
        return absl::OkStatus();
      }));
  VIGIL_RETURN_IF_ERROR(store_->ForEach(
      kCasesFamily, "subject/", [&](absl::string_view key, absl::string_view value) {
        open_by_subject_[std::string(key.substr(8))] = std::string(value);
        return absl::OkStatus();
      }));
  if (options_.clearances == nullptr) return absl::OkStatus();
  return store_->ForEach(
      kCasesFamily, "clearance/", [&](absl::string_view, absl::string_view value) -> absl::Status {
        VIGIL_ASSIGN_OR_RETURN(screening::ScreeningClearance c, ClearanceFromJson(ToStd(value)));
        options_.clearances->Grant(std::move(c));
        return absl::OkStatus();
      });
}

absl::Status CaseBook::CatchUp() {
  absl::MutexLock lock(&mu_);
  return CatchUpLocked();
}

absl::Status CaseBook::CatchUpLocked() {
  const uint64_t end = log_->size();
  KvWriteBatch batch;
  absl::flat_hash_set<std::string> dirty;
  absl::flat_hash_set<std::string> subjects;
  const auto flush = [&]() -> absl::Status {
    for (const std::string& id : dirty)
      batch.Put(kCasesFamily, CaseKey(id), CaseToJson(cases_[id]));
    for (const std::string& subject : subjects) {
      const auto it = open_by_subject_.find(subject);
      if (it == open_by_subject_.end()) {
        batch.Delete(kCasesFamily, SubjectKey(subject));
      } else {
        batch.Put(kCasesFamily, SubjectKey(subject), it->second);
      }
    }
    batch.Put(kCasesFamily, kPositionKey,
              Json{{"next", applied_},
                   {"alerts", alerts_},
                   {"events", events_},
                   {"rejected", rejected_events_}}
                  .dump());
    // Not synced: whatever a crash loses is applied again from the log, position included.
    absl::Status s = store_->Write(batch, {.sync = false});
    batch.Clear();
    dirty.clear();
    subjects.clear();
    return s;
  };
  const auto fail = [&](absl::Status s) {
    health_ = s;
    return s;
  };
  // A cleared verdict grants its clearance; a true match withdraws one (a false match says
  // nothing of later payments).
  const auto apply_review = [&](const CaseEvent& e, KvWriteBatch& b) {
    if (e.verdict == HitVerdict::kCleared) {
      screening::ScreeningClearance c{e.hit, e.party, e.expires, e.case_id, e.actor, e.text, e.at};
      b.Put(kCasesFamily, ClearanceKey(e.hit, e.party), ClearanceToJson(c));
      if (options_.clearances != nullptr) options_.clearances->Grant(std::move(c));
    } else if (e.verdict == HitVerdict::kTrueMatch) {
      b.Delete(kCasesFamily, ClearanceKey(e.hit, e.party));
      if (options_.clearances != nullptr) options_.clearances->Revoke(e.hit, e.party);
    }
  };
  size_t in_batch = 0;
  for (uint64_t seq = applied_; seq < end; ++seq) {
    absl::StatusOr<std::string> bytes = log_->ReadRecord(seq);
    if (!bytes.ok()) return fail(bytes.status());
    absl::StatusOr<audit::AuditRecord> record = audit::DecodeRecord(*bytes);
    if (!record.ok()) {
      return fail(absl::DataLossError(absl::StrCat("cases: decision log record ", seq, ": ",
                                                   record.status().message(),
                                                   "; run `vigil audit verify`")));
    }
    if (!record->event.empty()) {
      if (record->source == kCaseEventSource) {
        absl::StatusOr<CaseEvent> event = CaseEventFromJson(record->event);
        const auto it = event.ok() ? cases_.find(event->case_id) : cases_.end();
        if (it == cases_.end() || !CheckCaseEvent(it->second, *event, CaseRole::kSupervisor).ok()) {
          ++rejected_events_;
        } else {
          event->sequence = seq;
          Case& c = it->second;
          ApplyCaseEvent(c, *event);
          ++events_;
          batch.Put(kCasesFamily, EventKey(c.id, seq), CaseEventToJson(*event));
          dirty.insert(c.id);
          if (event->kind == CaseEventKind::kReviewHit) apply_review(*event, batch);
          if (c.closed()) {
            const auto open = open_by_subject_.find(c.subject);
            if (open != open_by_subject_.end() && open->second == c.id) {
              open_by_subject_.erase(open);
            }
            subjects.insert(c.subject);
          } else if (event->kind == CaseEventKind::kReopen) {
            open_by_subject_[c.subject] = c.id;
            subjects.insert(c.subject);
          }
        }
      }
    } else {
      absl::StatusOr<std::optional<Alert>> alert = AlertOf(*record, seq, options_.fx);
      if (!alert.ok()) return fail(alert.status());
      if (alert->has_value()) {
        Alert& a = **alert;
        if (options_.rule_severity) {
          for (const std::string& reason : a.reasons) {
            a.severity = std::max(a.severity, options_.rule_severity(reason));
          }
        }
        const auto open = open_by_subject_.find(a.subject);
        Case* c = nullptr;
        if (open != open_by_subject_.end()) {
          Case& candidate = cases_[open->second];
          if (Accepts(candidate, a, options_.policy)) c = &candidate;
        }
        if (c != nullptr) {
          AddAlert(*c, a);
        } else {
          Case opened = OpenCase(a);
          open_by_subject_[a.subject] = opened.id;
          subjects.insert(a.subject);
          std::string id = opened.id;
          c = &cases_.insert_or_assign(std::move(id), std::move(opened)).first->second;
        }
        ++alerts_;
        batch.Put(kCasesFamily, AlertKey(c->id, seq), AlertToJson(a));
        dirty.insert(c->id);
      }
    }
    applied_ = seq + 1;
    if (++in_batch == kRecordsPerBatch) {
      if (absl::Status s = flush(); !s.ok()) return fail(s);
      in_batch = 0;
    }
  }
  if (in_batch > 0) {
    if (absl::Status s = flush(); !s.ok()) return fail(s);
  }
  health_ = absl::OkStatus();
  return absl::OkStatus();
}

absl::StatusOr<Case> CaseBook::Act(const CaseActor& actor, const CaseAction& action) {
  absl::MutexLock acting(&act_mu_);
  return ActSerialized(actor, action);
}

absl::StatusOr<Case> CaseBook::ActSerialized(const CaseActor& actor, const CaseAction& action) {
  if (actor.name.empty()) return absl::InvalidArgumentError("a case action needs an actor");
  VIGIL_RETURN_IF_ERROR(CheckName("actor", actor.name));
  VIGIL_RETURN_IF_ERROR(CheckName("assignee", action.assignee));
  if (action.text.size() > kMaxCaseText) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"text\" is longer than ", kMaxCaseText, " bytes"));
  }
  CaseEvent e;
  if (action.kind == CaseEventKind::kAttach) {
    VIGIL_RETURN_IF_ERROR(CheckFileName(action.file_name));
    if (!IsAttachmentMediaType(action.media_type)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "\"Content-Type\": '", action.media_type,
          "' is not accepted for an attachment: application/pdf, image/png, image/jpeg, "
          "text/plain or text/csv"));
    }
    if (action.content.empty() || action.content.size() > options_.max_attachment_bytes) {
      return absl::InvalidArgumentError(absl::StrCat("\"body\": an attachment holds 1 to ",
                                                     options_.max_attachment_bytes, " bytes, not ",
                                                     action.content.size()));
    }
    e.file_name = action.file_name;
    e.media_type = action.media_type;
    e.size = action.content.size();
    e.sha256 = Sha256Hex(action.content);
  }
  if (action.kind == CaseEventKind::kReviewHit) {
    // Read from the log before the state is locked.
    VIGIL_ASSIGN_OR_RETURN(e.party, HitParty(action.case_id, action.alert, action.hit));
    e.alert = action.alert;
    e.hit = action.hit;
    e.verdict = action.verdict;
    if (e.verdict == HitVerdict::kCleared) e.expires = action.expires;
  }
  std::string body;
  {
    absl::MutexLock lock(&mu_);
    VIGIL_RETURN_IF_ERROR(CatchUpLocked());
    const auto it = cases_.find(action.case_id);
    if (it == cases_.end()) {
      return absl::NotFoundError(absl::StrCat("no case \"", action.case_id, "\""));
    }
    e.kind = action.kind;
    e.case_id = action.case_id;
    e.actor = actor.name;
    e.at = clock_.Now();
    e.assignee = action.assignee;
    e.text = action.text;
    e.outcome = action.outcome;
    if (e.kind == CaseEventKind::kClose &&
        NeedsSecondAnalyst(it->second, e.outcome, options_.policy)) {
      e.kind = CaseEventKind::kProposeClose;
    }
    if (e.kind != CaseEventKind::kClose && e.kind != CaseEventKind::kProposeClose) {
      e.outcome = CaseOutcome::kNone;
    }
    VIGIL_RETURN_IF_ERROR(CheckCaseEvent(it->second, e, actor.role));
    VIGIL_ASSIGN_OR_RETURN(
        body, audit::EncodeEventRecordBody(kCaseEventSource, CaseEventToJson(e), e.at, actor.name));
  }
  if (e.kind == CaseEventKind::kAttach) {
    // Durable before the event that names them: a recorded attachment always has its bytes.
    VIGIL_RETURN_IF_ERROR(store_->Put(kCasesFamily, AttachmentKey(e.case_id, e.sha256),
                                      action.content, {.sync = true}));
  }
  std::vector<audit::PendingRecord> records;
  records.push_back({"", std::move(body)});  // an event: no transaction id
  VIGIL_ASSIGN_OR_RETURN(std::vector<audit::AppendedRecord> appended,
                         log_->Append(std::move(records)));
  absl::MutexLock lock(&mu_);
  VIGIL_RETURN_IF_ERROR(CatchUpLocked());
  const Case& after = cases_.at(action.case_id);
  if (appended.empty() || after.last_sequence != appended.front().sequence) {
    return absl::InternalError(absl::StrCat("case ", action.case_id, ": the ",
                                            ToAbsl(CaseEventKindName(e.kind)),
                                            " recorded in the log did not apply"));
  }
  return after;
}

absl::StatusOr<Case> CaseBook::TakeNext(const CaseActor& actor) {
  absl::MutexLock acting(&act_mu_);
  std::string best_id;
  {
    absl::MutexLock lock(&mu_);
    VIGIL_RETURN_IF_ERROR(CatchUpLocked());
    const UtcTime now = clock_.Now();
    const Case* best = nullptr;
    double best_priority = -1;
    for (const auto& [id, c] : cases_) {
      const bool takeable =
          c.owner.empty() && (c.state == CaseState::kOpen || (c.state == CaseState::kEscalated &&
                                                              actor.role == CaseRole::kSupervisor));
      if (!takeable) continue;
      const double p = CasePriority(c, now, options_.policy);
      if (p > best_priority || (p == best_priority && c.opened < best->opened)) {
        best = &c;
        best_priority = p;
      }
    }
    if (best == nullptr) return absl::NotFoundError("no case waits in the queue");
    best_id = best->id;
  }
  return ActSerialized(actor, {.kind = CaseEventKind::kClaim, .case_id = best_id});
}

absl::StatusOr<Case> CaseBook::Get(const std::string& case_id) const {
  absl::MutexLock lock(&mu_);
  const auto it = cases_.find(case_id);
  if (it == cases_.end()) return absl::NotFoundError(absl::StrCat("no case \"", case_id, "\""));
  return it->second;
}

absl::StatusOr<std::vector<Alert>> CaseBook::Alerts(const std::string& case_id) const {
  VIGIL_RETURN_IF_ERROR(Get(case_id).status());
  std::vector<Alert> out;
  VIGIL_RETURN_IF_ERROR(
      store_->ForEach(kCasesFamily, absl::StrCat("alert/", case_id, "/"),
                      [&](absl::string_view, absl::string_view value) -> absl::Status {
                        VIGIL_ASSIGN_OR_RETURN(Alert a, AlertFromJson(ToStd(value)));
                        out.push_back(std::move(a));
                        return absl::OkStatus();
                      }));
  return out;
}

absl::StatusOr<std::vector<CaseEvent>> CaseBook::Timeline(const std::string& case_id) const {
  VIGIL_RETURN_IF_ERROR(Get(case_id).status());
  std::vector<CaseEvent> out;
  VIGIL_RETURN_IF_ERROR(store_->ForEach(
      kCasesFamily, absl::StrCat("event/", case_id, "/"),
      [&](absl::string_view key, absl::string_view value) -> absl::Status {
        absl::StatusOr<CaseEvent> e = CaseEventFromJson(ToStd(value));
        if (!e.ok()) {
          return absl::DataLossError(absl::StrCat("stored ", key, ": ", e.status().message()));
        }
        absl::SimpleAtoi(key.substr(key.rfind('/') + 1), &e->sequence);
        out.push_back(*std::move(e));
        return absl::OkStatus();
      }));
  return out;
}

absl::StatusOr<CasePage> CaseBook::List(const CaseQuery& q) const {
  if (q.limit > kMaxCasePage) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"limit\" ", q.limit, " is above the most a page holds, ", kMaxCasePage));
  }
  const UtcTime now = clock_.Now();
  std::vector<ListedCase> matching;
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [id, c] : cases_) {
      if (q.state.has_value() && c.state != *q.state) continue;
      if (q.unclosed && c.closed()) continue;
      if (q.owner.has_value() && c.owner != *q.owner) continue;
      if (!q.subject.empty() && c.subject != q.subject) continue;
      if (!q.reason.empty() &&
          std::find(c.reasons.begin(), c.reasons.end(), q.reason) == c.reasons.end()) {
        continue;
      }
      const double score = std::isnan(c.max_score) ? -1 : c.max_score;
      if (q.min_score.has_value() && score < *q.min_score) continue;
      if (q.max_score.has_value() && score > *q.max_score) continue;
      const bool overdue = Overdue(c, now, options_.policy);
      if (q.overdue && !overdue) continue;
      matching.push_back({c, CasePriority(c, now, options_.policy), overdue});
    }
  }
  const auto key = [&](const ListedCase& l) -> double {
    switch (q.order) {
      case CaseOrder::kPriority:
        return l.priority;
      case CaseOrder::kOpened:
        return static_cast<double>(l.c.opened.time_since_epoch().count());
      case CaseOrder::kUpdated:
        return static_cast<double>(l.c.updated.time_since_epoch().count());
      case CaseOrder::kAlerts:
        return static_cast<double>(l.c.alerts);
    }
    return 0;
  };
  // Descending by the order's key; ties by id, so that pages are stable.
  std::sort(matching.begin(), matching.end(), [&](const ListedCase& a, const ListedCase& b) {
    const double ka = key(a), kb = key(b);
    if (ka != kb) return ka > kb;
    return a.c.id < b.c.id;
  });
  CasePage page;
  page.total = matching.size();
  for (size_t k = q.offset; k < matching.size() && page.cases.size() < q.limit; ++k) {
    page.cases.push_back(std::move(matching[k]));
  }
  return page;
}

absl::StatusOr<Alert> CaseBook::FindAlert(const std::string& case_id, uint64_t sequence) const {
  VIGIL_RETURN_IF_ERROR(Get(case_id).status());
  VIGIL_ASSIGN_OR_RETURN(std::optional<std::string> stored,
                         store_->Get(kCasesFamily, AlertKey(case_id, sequence)));
  if (!stored.has_value()) {
    return absl::NotFoundError(absl::StrCat("record ", sequence, " is no alert of ", case_id));
  }
  return AlertFromJson(*stored);
}

absl::StatusOr<std::string> CaseBook::HitParty(const std::string& case_id, uint64_t alert,
                                               const std::string& hit) const {
  if (absl::StatusOr<Alert> found = FindAlert(case_id, alert); !found.ok()) {
    if (!absl::IsNotFound(found.status()) || !Get(case_id).ok()) return found.status();
    return absl::InvalidArgumentError(absl::StrCat("\"sequence\": ", found.status().message()));
  }
  VIGIL_ASSIGN_OR_RETURN(std::string bytes, log_->ReadRecord(alert));
  absl::StatusOr<audit::AuditRecord> record = audit::DecodeRecord(bytes);
  if (!record.ok()) {
    return absl::DataLossError(
        absl::StrCat("cases: decision log record ", alert, ": ", record.status().message()));
  }
  for (const Reason& r : record->decision.reasons) {
    if (r.kind != Reason::Kind::kScreening || r.code != hit) continue;
    const std::string party =
        screening::ScreenedParty(record->transaction, screening::HitPartyRole(r.text));
    if (!party.empty()) return party;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("\"hit\": record ", alert, " has no screening hit \"", hit, "\""));
}

absl::StatusOr<CaseAttachment> CaseBook::Attachment(const std::string& case_id,
                                                    const std::string& sha256) const {
  VIGIL_ASSIGN_OR_RETURN(std::vector<CaseEvent> timeline, Timeline(case_id));
  const auto event = std::find_if(timeline.begin(), timeline.end(), [&](const CaseEvent& e) {
    return e.kind == CaseEventKind::kAttach && e.sha256 == sha256;
  });
  VIGIL_ASSIGN_OR_RETURN(std::optional<std::string> bytes,
                         store_->Get(kCasesFamily, AttachmentKey(case_id, sha256)));
  if (event == timeline.end() || !bytes.has_value()) {
    return absl::NotFoundError(
        absl::StrCat("case ", case_id, " has no attachment of SHA-256 ", sha256));
  }
  if (Sha256Hex(*bytes) != sha256) {
    return absl::DataLossError(absl::StrCat(
        "the stored attachment ", sha256, " of case ", case_id,
        " does not match the digest its event recorded in the decision log: it was altered"));
  }
  return CaseAttachment{*event, *std::move(bytes)};
}

std::vector<screening::ScreeningClearance> CaseBook::Clearances() const {
  if (options_.clearances == nullptr) return {};
  return options_.clearances->Holding(clock_.Now());
}

CaseTallyReport CaseBook::Tally() const {
  CaseTally tally(clock_.Now(), options_.policy);
  absl::MutexLock lock(&mu_);
  for (const auto& [id, c] : cases_) tally.Add(c);
  return std::move(tally).Finish();
}

CaseBookStats CaseBook::stats() const {
  absl::MutexLock lock(&mu_);
  CaseBookStats s;
  s.applied = applied_;
  s.cases = cases_.size();
  for (const auto& [id, c] : cases_) s.open += c.closed() ? 0 : 1;
  s.alerts = alerts_;
  s.events = events_;
  s.rejected_events = rejected_events_;
  return s;
}

absl::Status CaseBook::health() const {
  absl::MutexLock lock(&mu_);
  return health_;
}

}  // namespace vigil::cases
