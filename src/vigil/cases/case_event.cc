#include "vigil/cases/case_event.h"

#include <array>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "vigil/cases/internal/name_table.h"
#include "vigil/common/string_view.h"

namespace vigil::cases {
namespace {

using Json = nlohmann::json;

constexpr std::array<std::pair<CaseEventKind, std::string_view>, 12> kKinds = {{
    {CaseEventKind::kClaim, "claim"},
    {CaseEventKind::kRelease, "release"},
    {CaseEventKind::kAssign, "assign"},
    {CaseEventKind::kNote, "note"},
    {CaseEventKind::kEscalate, "escalate"},
    {CaseEventKind::kProposeClose, "propose_close"},
    {CaseEventKind::kApproveClose, "approve_close"},
    {CaseEventKind::kRejectClose, "reject_close"},
    {CaseEventKind::kClose, "close"},
    {CaseEventKind::kReopen, "reopen"},
    {CaseEventKind::kReviewHit, "review_hit"},
    {CaseEventKind::kAttach, "attach"},
}};

constexpr std::array<std::pair<HitVerdict, std::string_view>, 3> kVerdicts = {{
    {HitVerdict::kTrueMatch, "true_match"},
    {HitVerdict::kFalseMatch, "false_match"},
    {HitVerdict::kCleared, "cleared"},
}};

constexpr std::array<std::pair<CaseOutcome, std::string_view>, 4> kOutcomes = {{
    {CaseOutcome::kSuspiciousReported, "suspicious_reported"},
    {CaseOutcome::kNotSuspicious, "not_suspicious"},
    {CaseOutcome::kFalsePositive, "false_positive"},
    {CaseOutcome::kValuableAlert, "valuable_alert"},
}};

bool TakesOutcome(CaseEventKind kind) {
  return kind == CaseEventKind::kProposeClose || kind == CaseEventKind::kClose;
}

absl::Status Invalid(std::string_view field, std::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("case event: \"", ToAbsl(field), "\" ", ToAbsl(why)));
}

// The string member "field" of "j" ("" when absent); kInvalidArgument when not a string or
// longer than "limit".
absl::StatusOr<std::string> StringField(const Json& j, std::string_view field, size_t limit) {
  const auto it = j.find(std::string(field));
  if (it == j.end()) return std::string();
  if (!it->is_string()) return Invalid(field, "must be a string");
  std::string value = it->get<std::string>();
  if (value.size() > limit) {
    return Invalid(field, absl::StrCat("is longer than ", limit, " bytes"));
  }
  return value;
}

}  // namespace

std::string_view CaseEventKindName(CaseEventKind kind) {
  return internal::NameIn(kKinds, kind, "unknown");
}

absl::StatusOr<CaseEventKind> ParseCaseEventKind(std::string_view name) {
  if (std::optional<CaseEventKind> kind = internal::ValueIn(kKinds, name)) return *kind;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown case event \"", ToAbsl(name),
                   "\": one of claim, release, assign, note, escalate, propose_close, "
                   "approve_close, reject_close, close, reopen, review_hit, attach"));
}

bool IsAttachmentMediaType(std::string_view media_type) {
  for (std::string_view t : kAttachmentMediaTypes) {
    if (t == media_type) return true;
  }
  return false;
}

std::string_view HitVerdictName(HitVerdict verdict) {
  return internal::NameIn(kVerdicts, verdict, "none");
}

absl::StatusOr<HitVerdict> ParseHitVerdict(std::string_view name) {
  if (std::optional<HitVerdict> v = internal::ValueIn(kVerdicts, name)) return *v;
  return absl::InvalidArgumentError(absl::StrCat("unknown verdict \"", ToAbsl(name),
                                                 "\": one of true_match, false_match, cleared"));
}

std::string_view CaseOutcomeName(CaseOutcome outcome) {
  return internal::NameIn(kOutcomes, outcome, "none");
}

absl::StatusOr<CaseOutcome> ParseCaseOutcome(std::string_view name) {
  if (std::optional<CaseOutcome> outcome = internal::ValueIn(kOutcomes, name)) return *outcome;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown outcome \"", ToAbsl(name),
                   "\": one of suspicious_reported, not_suspicious, false_positive, "
                   "valuable_alert"));
}

bool IsSuspicious(CaseOutcome outcome) { return outcome == CaseOutcome::kSuspiciousReported; }

std::string CaseEventToJson(const CaseEvent& e) {
  // nlohmann's object keeps its keys sorted: one event, one text.
  Json j = {{"source", kCaseEventSource},
            {"kind", CaseEventKindName(e.kind)},
            {"case", e.case_id},
            {"actor", e.actor},
            {"at", FormatUtc(e.at)}};
  if (!e.assignee.empty() || e.kind == CaseEventKind::kAssign) j["assignee"] = e.assignee;
  if (!e.text.empty()) j["text"] = e.text;
  if (TakesOutcome(e.kind)) j["outcome"] = CaseOutcomeName(e.outcome);
  if (e.kind == CaseEventKind::kReviewHit) {
    j["alert"] = e.alert;
    j["hit"] = e.hit;
    j["party"] = e.party;
    j["verdict"] = HitVerdictName(e.verdict);
    if (e.verdict == HitVerdict::kCleared) j["expires"] = FormatUtc(e.expires);
  }
  if (e.kind == CaseEventKind::kAttach) {
    j["file_name"] = e.file_name;
    j["media_type"] = e.media_type;
    j["sha256"] = e.sha256;
    j["size"] = e.size;
  }
  return j.dump();
}

absl::StatusOr<CaseEvent> CaseEventFromJson(std::string_view text) {
  const Json j = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return absl::InvalidArgumentError("case event: not a JSON object");
  CaseEvent e;
  absl::StatusOr<std::string> source = StringField(j, "source", kMaxCaseName);
  if (!source.ok()) return source.status();
  if (*source != kCaseEventSource) return Invalid("source", "is not \"cases\"");
  absl::StatusOr<std::string> kind = StringField(j, "kind", kMaxCaseName);
  if (!kind.ok()) return kind.status();
  absl::StatusOr<CaseEventKind> parsed_kind = ParseCaseEventKind(*kind);
  if (!parsed_kind.ok()) return Invalid("kind", ToStd(parsed_kind.status().message()));
  e.kind = *parsed_kind;
  for (const auto& [field, target] : {std::pair<std::string_view, std::string*>{"case", &e.case_id},
                                      {"actor", &e.actor},
                                      {"assignee", &e.assignee}}) {
    absl::StatusOr<std::string> value = StringField(j, field, kMaxCaseName);
    if (!value.ok()) return value.status();
    *target = *std::move(value);
  }
  if (e.case_id.empty()) return Invalid("case", "is missing");
  if (e.actor.empty()) return Invalid("actor", "is missing");
  absl::StatusOr<std::string> body = StringField(j, "text", kMaxCaseText);
  if (!body.ok()) return body.status();
  e.text = *std::move(body);
  absl::StatusOr<std::string> at = StringField(j, "at", kMaxCaseName);
  if (!at.ok()) return at.status();
  absl::StatusOr<UtcTime> time = ParseRfc3339(*at);
  if (!time.ok()) return Invalid("at", ToStd(time.status().message()));
  e.at = *time;
  const bool has_outcome = j.contains("outcome");
  if (has_outcome != TakesOutcome(e.kind)) {
    return Invalid("outcome", has_outcome ? absl::StrCat("is not part of a ", *kind, " event")
                                          : std::string("is missing"));
  }
  if (has_outcome) {
    absl::StatusOr<std::string> outcome = StringField(j, "outcome", kMaxCaseName);
    if (!outcome.ok()) return outcome.status();
    absl::StatusOr<CaseOutcome> parsed = ParseCaseOutcome(*outcome);
    if (!parsed.ok()) return Invalid("outcome", ToStd(parsed.status().message()));
    e.outcome = *parsed;
  }
  const bool review = e.kind == CaseEventKind::kReviewHit;
  for (const char* field : {"alert", "hit", "party", "verdict"}) {
    if (j.contains(field) != review) {
      return Invalid(field, review ? std::string("is missing")
                                   : absl::StrCat("is not part of a ", *kind, " event"));
    }
  }
  if (review) {
    if (!j["alert"].is_number_unsigned()) return Invalid("alert", "must be a record sequence");
    e.alert = j["alert"].get<uint64_t>();
    for (const auto& [field, target] :
         {std::pair<std::string_view, std::string*>{"hit", &e.hit}, {"party", &e.party}}) {
      absl::StatusOr<std::string> value = StringField(j, field, kMaxCaseName);
      if (!value.ok()) return value.status();
      if (value->empty()) return Invalid(field, "is empty");
      *target = *std::move(value);
    }
    absl::StatusOr<std::string> verdict = StringField(j, "verdict", kMaxCaseName);
    if (!verdict.ok()) return verdict.status();
    absl::StatusOr<HitVerdict> parsed = ParseHitVerdict(*verdict);
    if (!parsed.ok()) return Invalid("verdict", ToStd(parsed.status().message()));
    e.verdict = *parsed;
  }
  if (j.contains("expires") != (e.verdict == HitVerdict::kCleared)) {
    return Invalid("expires", e.verdict == HitVerdict::kCleared
                                  ? std::string("is missing")
                                  : std::string("belongs to a cleared verdict only"));
  }
  if (e.verdict == HitVerdict::kCleared) {
    absl::StatusOr<std::string> expires = StringField(j, "expires", kMaxCaseName);
    if (!expires.ok()) return expires.status();
    absl::StatusOr<UtcTime> until = ParseRfc3339(*expires);
    if (!until.ok()) return Invalid("expires", ToStd(until.status().message()));
    e.expires = *until;
  }
  const bool attach = e.kind == CaseEventKind::kAttach;
  for (const char* field : {"file_name", "media_type", "sha256", "size"}) {
    if (j.contains(field) != attach) {
      return Invalid(field, attach ? std::string("is missing")
                                   : absl::StrCat("is not part of a ", *kind, " event"));
    }
  }
  if (attach) {
    for (const auto& [field, target] :
         {std::pair<std::string_view, std::string*>{"file_name", &e.file_name},
          {"media_type", &e.media_type},
          {"sha256", &e.sha256}}) {
      absl::StatusOr<std::string> value = StringField(j, field, kMaxCaseName);
      if (!value.ok()) return value.status();
      if (value->empty()) return Invalid(field, "is empty");
      *target = *std::move(value);
    }
    if (!j["size"].is_number_unsigned()) return Invalid("size", "must be a byte count");
    e.size = j["size"].get<uint64_t>();
  }
  return e;
}

}  // namespace vigil::cases
