#include "vigil/cases/case_file.h"

#include <algorithm>
#include <array>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "vigil/cases/internal/name_table.h"
#include "vigil/common/string_view.h"
#include "vigil/core/currency.h"

namespace vigil::cases {
namespace {

using Json = nlohmann::json;

constexpr std::array<std::pair<CaseState, std::string_view>, 5> kStates = {{
    {CaseState::kOpen, "open"},
    {CaseState::kInReview, "in_review"},
    {CaseState::kEscalated, "escalated"},
    {CaseState::kAwaitingApproval, "awaiting_approval"},
    {CaseState::kClosed, "closed"},
}};

absl::Status NotNow(const Case& c, std::string_view what) {
  return absl::FailedPreconditionError(
      absl::StrCat("case ", c.id, " is ", ToAbsl(CaseStateName(c.state)),
                   c.owner.empty() ? std::string() : absl::StrCat(" (held by ", c.owner, ")"), ": ",
                   ToAbsl(what)));
}

bool Unowned(const Case& c) { return c.owner.empty(); }

Json TimeJson(UtcTime t) { return t == UtcTime{} ? Json(nullptr) : Json(FormatUtc(t)); }

// Reads what the stored JSON holds, remembering the first field that is wrong (kDataLoss).
class Reader {
 public:
  explicit Reader(const Json& j, std::string_view what) : j_(j), what_(what) {}
  std::string String(const char* key) {
    const auto it = j_.find(key);
    if (it == j_.end() || it->is_null()) return "";
    if (!it->is_string()) return Bad(key), "";
    return it->get<std::string>();
  }
  UtcTime Time(const char* key) {
    const std::string text = String(key);
    if (text.empty()) return UtcTime{};
    absl::StatusOr<UtcTime> t = ParseRfc3339(text);
    if (!t.ok()) return Bad(key), UtcTime{};
    return *t;
  }
  template <typename T>
  T Number(const char* key) {
    const auto it = j_.find(key);
    if (it == j_.end()) return T{};
    if (it->is_null()) return std::is_floating_point_v<T> ? T(std::nan("")) : T{};
    if (!it->is_number()) return Bad(key), T{};
    return it->get<T>();
  }
  std::vector<std::string> Strings(const char* key) {
    std::vector<std::string> out;
    const auto it = j_.find(key);
    if (it == j_.end()) return out;
    if (!it->is_array()) return Bad(key), out;
    for (const Json& v : *it) {
      if (!v.is_string()) return Bad(key), out;
      out.push_back(v.get<std::string>());
    }
    return out;
  }
  void Bad(const char* key) {
    if (status_.ok()) {
      status_ = absl::DataLossError(
          absl::StrCat("stored ", ToAbsl(what_), ": field \"", key, "\" is malformed"));
    }
  }
  const absl::Status& status() const { return status_; }

 private:
  const Json& j_;
  std::string_view what_;
  absl::Status status_;
};

}  // namespace

std::string_view CaseStateName(CaseState state) {
  return internal::NameIn(kStates, state, "unknown");
}

absl::StatusOr<CaseState> ParseCaseState(std::string_view name) {
  if (std::optional<CaseState> state = internal::ValueIn(kStates, name)) return *state;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown case state \"", ToAbsl(name),
                   "\": one of open, in_review, escalated, awaiting_approval, closed"));
}

bool Accepts(const Case& c, const Alert& alert, const CasePolicy& policy) {
  return !c.closed() && c.subject == alert.subject &&
         alert.event_time - c.first_payment <= policy.window &&
         c.first_payment - alert.event_time <= policy.window;
}

Case OpenCase(const Alert& alert) {
  Case c;
  c.id = absl::StrCat("case-", alert.sequence);
  c.subject = alert.subject;
  c.subject_name = alert.subject_name;
  c.opened = alert.decided;
  c.first_payment = c.last_payment = alert.event_time;
  AddAlert(c, alert);
  return c;
}

void AddAlert(Case& c, const Alert& alert) {
  ++c.alerts;
  if (alert.action == Action::kBlock) ++c.blocks;
  if (alert.screening_hit) ++c.screening_hits;
  c.max_severity = std::max(c.max_severity, alert.severity);
  if (!std::isnan(alert.score) && (std::isnan(c.max_score) || alert.score > c.max_score)) {
    c.max_score = alert.score;
  }
  c.amount_reporting_micros += alert.amount_reporting_micros;
  c.first_payment = std::min(c.first_payment, alert.event_time);
  c.last_payment = std::max(c.last_payment, alert.event_time);
  for (const std::string& r : alert.reasons) {
    if (c.reasons.size() >= kMaxCaseReasons) break;
    if (std::find(c.reasons.begin(), c.reasons.end(), r) == c.reasons.end()) {
      c.reasons.push_back(r);
    }
  }
  if (c.subject_name.empty()) c.subject_name = alert.subject_name;
  c.updated = std::max(c.updated, alert.decided);
  c.last_sequence = alert.sequence;
}

bool NeedsSecondAnalyst(const Case& c, CaseOutcome outcome, const CasePolicy& policy) {
  return (policy.four_eyes_block && c.blocks > 0) ||
         (policy.four_eyes_suspicious && IsSuspicious(outcome));
}

absl::Status CheckCaseEvent(const Case& c, const CaseEvent& e, CaseRole role) {
  const bool supervisor = role == CaseRole::kSupervisor;
  const bool mine = !c.owner.empty() && c.owner == e.actor;
  const auto need_text = [&](std::string_view what) -> absl::Status {
    if (e.text.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("\"text\": ", ToAbsl(what), " is required"));
    }
    return absl::OkStatus();
  };
  switch (e.kind) {
    case CaseEventKind::kClaim:
      if (mine) return NotNow(c, "it is already yours");
      if (!Unowned(c)) return NotNow(c, "release or reassign it first");
      if (c.state == CaseState::kEscalated && !supervisor) {
        return absl::PermissionDeniedError(
            absl::StrCat("case ", c.id, " is escalated: only a supervisor may take it"));
      }
      if (c.state != CaseState::kOpen && c.state != CaseState::kEscalated) {
        return NotNow(c, "only an open or escalated case can be taken");
      }
      return absl::OkStatus();
    case CaseEventKind::kRelease:
      if (!mine) return NotNow(c, "only its holder can release it");
      if (c.state != CaseState::kInReview && c.state != CaseState::kEscalated) {
        return NotNow(c, "only a case in review or escalated can be released");
      }
      return absl::OkStatus();
    case CaseEventKind::kAssign:
      if (!supervisor) {
        return absl::PermissionDeniedError(
            absl::StrCat("only a supervisor may assign case ", c.id));
      }
      if (c.closed() || c.state == CaseState::kAwaitingApproval) {
        return NotNow(c, "a closed case, or one awaiting approval, cannot be assigned");
      }
      if (e.assignee == c.owner) {
        return NotNow(c, e.assignee.empty() ? "it is in the queue already"
                                            : "it is held by that analyst already");
      }
      return absl::OkStatus();
    case CaseEventKind::kNote:
      if (!Unowned(c) && !mine && !supervisor) {
        return NotNow(c, "only its holder or a supervisor may add notes while it is held");
      }
      return need_text("the note");
    case CaseEventKind::kEscalate:
      if (!mine || c.state != CaseState::kInReview) {
        return NotNow(c, "only its holder can escalate a case in review");
      }
      return need_text("why it is escalated");
    case CaseEventKind::kProposeClose:
    case CaseEventKind::kClose:
      if (!mine || (c.state != CaseState::kInReview && c.state != CaseState::kEscalated)) {
        return NotNow(c, "only its holder can close a case in review or escalated");
      }
      if (e.outcome == CaseOutcome::kNone) {
        return absl::InvalidArgumentError("\"outcome\": a closing needs an outcome");
      }
      return need_text("the rationale");
    case CaseEventKind::kApproveClose:
    case CaseEventKind::kRejectClose:
      if (c.state != CaseState::kAwaitingApproval) {
        return NotNow(c, "no closing awaits approval");
      }
      if (e.actor == c.proposed_by) {
        return NotNow(c, absl::StrCat("the closing was proposed by ", c.proposed_by,
                                      ": a second analyst must approve or reject it"));
      }
      return e.kind == CaseEventKind::kRejectClose ? need_text("why it is rejected")
                                                   : absl::OkStatus();
    case CaseEventKind::kReopen:
      if (!c.closed()) return NotNow(c, "only a closed case can be reopened");
      if (!supervisor) {
        return absl::PermissionDeniedError(
            absl::StrCat("only a supervisor may reopen case ", c.id));
      }
      return need_text("why it is reopened");
    case CaseEventKind::kReviewHit:
      if (!mine || (c.state != CaseState::kInReview && c.state != CaseState::kEscalated)) {
        return NotNow(c, "only its holder can review its screening hits");
      }
      if (e.hit.empty() || e.party.empty()) {
        return absl::InvalidArgumentError("\"hit\": a review names the hit and its party");
      }
      if (e.verdict == HitVerdict::kNone) {
        return absl::InvalidArgumentError(
            "\"verdict\": one of true_match, false_match, cleared is required");
      }
      if (e.verdict == HitVerdict::kCleared &&
          (e.expires <= e.at || e.expires > e.at + kMaxClearance)) {
        return absl::InvalidArgumentError(
            absl::StrCat("\"expires\": a clearance ends after now and within ",
                         kMaxClearance.count() / 24, " days"));
      }
      return need_text("why");
    case CaseEventKind::kAttach:
      if (c.closed()) return NotNow(c, "a closed case takes no attachments; reopen it first");
      if (!Unowned(c) && !mine && !supervisor) {
        return NotNow(c, "only its holder or a supervisor may attach files while it is held");
      }
      if (e.file_name.empty() || e.sha256.size() != 64 || !IsAttachmentMediaType(e.media_type)) {
        return absl::InvalidArgumentError(
            "\"name\": an attachment needs a file name, an accepted media type and its digest");
      }
      return absl::OkStatus();
  }
  return absl::InvalidArgumentError("unknown case event");
}

void ApplyCaseEvent(Case& c, const CaseEvent& e) {
  c.updated = std::max(c.updated, e.at);
  if (e.sequence > 0) c.last_sequence = e.sequence;
  switch (e.kind) {
    case CaseEventKind::kClaim:
      c.owner = e.actor;
      if (c.state == CaseState::kOpen) c.state = CaseState::kInReview;
      break;
    case CaseEventKind::kRelease:
      c.owner.clear();
      if (c.state == CaseState::kInReview) c.state = CaseState::kOpen;
      break;
    case CaseEventKind::kAssign:
      c.owner = e.assignee;
      if (c.state != CaseState::kEscalated) {
        c.state = c.owner.empty() ? CaseState::kOpen : CaseState::kInReview;
      }
      break;
    case CaseEventKind::kNote:
      ++c.notes;
      break;
    case CaseEventKind::kEscalate:
      c.state = CaseState::kEscalated;
      c.owner.clear();
      break;
    case CaseEventKind::kProposeClose:
      c.state = CaseState::kAwaitingApproval;
      c.outcome = e.outcome;
      c.rationale = e.text;
      c.proposed_by = e.actor;
      c.owner.clear();
      break;
    case CaseEventKind::kApproveClose:
      c.state = CaseState::kClosed;
      c.closed_by = c.proposed_by;
      c.approved_by = e.actor;
      c.proposed_by.clear();
      c.closed_at = e.at;
      break;
    case CaseEventKind::kRejectClose:
      c.state = CaseState::kInReview;
      c.owner = c.proposed_by;
      c.proposed_by.clear();
      c.outcome = CaseOutcome::kNone;
      c.rationale.clear();
      break;
    case CaseEventKind::kClose:
      c.state = CaseState::kClosed;
      c.outcome = e.outcome;
      c.rationale = e.text;
      c.closed_by = e.actor;
      c.owner.clear();
      c.closed_at = e.at;
      break;
    case CaseEventKind::kReopen:
      c.state = CaseState::kOpen;
      c.owner.clear();
      c.outcome = CaseOutcome::kNone;
      c.rationale.clear();
      c.closed_by.clear();
      c.approved_by.clear();
      c.closed_at = UtcTime{};
      ++c.reopened;
      break;
    case CaseEventKind::kReviewHit:
      break;  // the verdict is the event; the book applies a clearance
    case CaseEventKind::kAttach:
      ++c.attachments;
      break;
  }
}

double CasePriority(const Case& c, UtcTime now, const CasePolicy& policy) {
  double p = std::isnan(c.max_score) ? 0 : 30 * std::clamp(c.max_score, 0.0, 1.0);
  p += std::clamp(c.max_severity, 0, 100) / 10.0;
  const double amount = static_cast<double>(c.amount_reporting_micros) / 1e6;
  if (amount > 1000) p += std::min(20.0, 5 * std::log10(amount / 1000));
  if (c.blocks > 0) p += 10;
  p += std::min(10.0, 2.5 * std::log2(static_cast<double>(std::max<uint64_t>(c.alerts, 1))));
  if (!c.closed() && policy.sla.count() > 0) {
    const double age = std::chrono::duration<double>(now - c.opened).count();
    p += 20 * std::clamp(age / static_cast<double>(policy.sla.count()), 0.0, 1.0);
  }
  return p;
}

bool Overdue(const Case& c, UtcTime now, const CasePolicy& policy) {
  return !c.closed() && now - c.opened > policy.sla;
}

std::string CaseToJson(const Case& c) {
  Json j = {{"id", c.id},
            {"subject", c.subject},
            {"subject_name", c.subject_name},
            {"state", CaseStateName(c.state)},
            {"owner", c.owner},
            {"outcome",
             c.outcome == CaseOutcome::kNone ? Json(nullptr) : Json(CaseOutcomeName(c.outcome))},
            {"rationale", c.rationale},
            {"proposed_by", c.proposed_by},
            {"closed_by", c.closed_by},
            {"approved_by", c.approved_by},
            {"opened", TimeJson(c.opened)},
            {"updated", TimeJson(c.updated)},
            {"closed_at", TimeJson(c.closed_at)},
            {"first_payment", TimeJson(c.first_payment)},
            {"last_payment", TimeJson(c.last_payment)},
            {"alerts", c.alerts},
            {"blocks", c.blocks},
            {"screening_hits", c.screening_hits},
            {"max_score", std::isnan(c.max_score) ? Json(nullptr) : Json(c.max_score)},
            {"max_severity", c.max_severity},
            {"amount_reporting_micros", c.amount_reporting_micros},
            {"reasons", c.reasons},
            {"notes", c.notes},
            {"attachments", c.attachments},
            {"reopened", c.reopened},
            {"last_sequence", c.last_sequence}};
  return j.dump();
}

absl::StatusOr<Case> CaseFromJson(std::string_view text) {
  const Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return absl::DataLossError("stored case: not a JSON object");
  Reader r(j, "case");
  Case c;
  c.id = r.String("id");
  c.subject = r.String("subject");
  c.subject_name = r.String("subject_name");
  absl::StatusOr<CaseState> state = ParseCaseState(r.String("state"));
  if (!state.ok()) r.Bad("state");
  c.state = state.value_or(CaseState::kOpen);
  c.owner = r.String("owner");
  const std::string outcome = r.String("outcome");
  if (!outcome.empty()) {
    absl::StatusOr<CaseOutcome> o = ParseCaseOutcome(outcome);
    if (!o.ok()) r.Bad("outcome");
    c.outcome = o.value_or(CaseOutcome::kNone);
  }
  c.rationale = r.String("rationale");
  c.proposed_by = r.String("proposed_by");
  c.closed_by = r.String("closed_by");
  c.approved_by = r.String("approved_by");
  c.opened = r.Time("opened");
  c.updated = r.Time("updated");
  c.closed_at = r.Time("closed_at");
  c.first_payment = r.Time("first_payment");
  c.last_payment = r.Time("last_payment");
  c.alerts = r.Number<uint64_t>("alerts");
  c.blocks = r.Number<uint64_t>("blocks");
  c.screening_hits = r.Number<uint64_t>("screening_hits");
  c.max_score = r.Number<double>("max_score");
  c.max_severity = r.Number<int>("max_severity");
  c.amount_reporting_micros = r.Number<int64_t>("amount_reporting_micros");
  c.reasons = r.Strings("reasons");
  c.notes = r.Number<uint32_t>("notes");
  c.attachments = r.Number<uint32_t>("attachments");
  c.reopened = r.Number<uint32_t>("reopened");
  c.last_sequence = r.Number<uint64_t>("last_sequence");
  if (c.id.empty()) r.Bad("id");
  if (!r.status().ok()) return r.status();
  return c;
}

std::string AlertToJson(const Alert& a) {
  Json j = {{"sequence", a.sequence},
            {"transaction_id", a.transaction_id},
            {"event_time", TimeJson(a.event_time)},
            {"decided", TimeJson(a.decided)},
            {"action", ToStd(ActionName(a.action))},
            {"score", std::isnan(a.score) ? Json(nullptr) : Json(a.score)},
            {"subject", a.subject},
            {"counterparty", a.counterparty},
            {"subject_name", a.subject_name},
            {"counterparty_name", a.counterparty_name},
            {"amount", a.amount.ToDecimalString()},
            {"currency", a.amount.currency().code()},
            {"amount_reporting_micros", a.amount_reporting_micros},
            {"reasons", a.reasons},
            {"screening_hit", a.screening_hit},
            {"severity", a.severity}};
  return j.dump();
}

absl::StatusOr<Alert> AlertFromJson(std::string_view text) {
  const Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return absl::DataLossError("stored alert: not a JSON object");
  Reader r(j, "alert");
  Alert a;
  a.sequence = r.Number<uint64_t>("sequence");
  a.transaction_id = r.String("transaction_id");
  a.event_time = r.Time("event_time");
  a.decided = r.Time("decided");
  const std::string action = r.String("action");
  if (action == "BLOCK") {
    a.action = Action::kBlock;
  } else if (action == "REVIEW") {
    a.action = Action::kReview;
  } else {
    r.Bad("action");
  }
  a.score = r.Number<double>("score");
  a.subject = r.String("subject");
  a.counterparty = r.String("counterparty");
  a.subject_name = r.String("subject_name");
  a.counterparty_name = r.String("counterparty_name");
  absl::StatusOr<Currency> currency = Currency::FromCode(r.String("currency"));
  if (!currency.ok()) {
    r.Bad("currency");
  } else {
    absl::StatusOr<Money> amount = Money::Parse(r.String("amount"), *currency);
    if (!amount.ok()) r.Bad("amount");
    if (amount.ok()) a.amount = *amount;
  }
  a.amount_reporting_micros = r.Number<int64_t>("amount_reporting_micros");
  a.reasons = r.Strings("reasons");
  a.severity = r.Number<int>("severity");
  const auto hit = j.find("screening_hit");
  a.screening_hit = hit != j.end() && hit->is_boolean() && hit->get<bool>();
  if (!r.status().ok()) return r.status();
  return a;
}

}  // namespace vigil::cases
