#include "vigil/server/case_api.h"

#include <charconv>
#include <cmath>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "vigil/common/string_view.h"
#include "vigil/server/query_params.h"

namespace vigil {
namespace {

using Json = nlohmann::json;

HttpResponse JsonAnswer(int status, const Json& body) {
  HttpResponse r;
  r.status = status;
  r.body = body.dump();
  return r;
}

// A CaseBook error as the API answers it.
HttpResponse Refused(const absl::Status& s) {
  std::string_view message(s.message().data(), s.message().size());
  switch (s.code()) {
    case absl::StatusCode::kInvalidArgument: {
      // The book names the field first: "\"text\": ...".
      std::string field;
      if (message.size() > 1 && message[0] == '"') {
        field = std::string(message.substr(1, message.find('"', 1) - 1));
      }
      return HttpError(400, "invalid_field", field, message);
    }
    case absl::StatusCode::kNotFound:
      return HttpError(404, "not_found", "", message);
    case absl::StatusCode::kPermissionDenied:
      return HttpError(403, "forbidden", "", message);
    case absl::StatusCode::kFailedPrecondition:
      return HttpError(409, "case_conflict", "", message);
    case absl::StatusCode::kResourceExhausted: {
      HttpResponse r = HttpError(503, "overloaded", "", message);
      r.headers.push_back({"Retry-After", "1"});
      return r;
    }
    default:
      return HttpError(503, "cases_unavailable", "", message);
  }
}

Json CaseJson(const cases::Case& c) { return Json::parse(cases::CaseToJson(c)); }

Json ListedJson(const cases::ListedCase& l) {
  Json j = CaseJson(l.c);
  j["priority"] = std::round(l.priority * 100) / 100;
  j["overdue"] = l.overdue;
  return j;
}

// A query parameter that must be a whole number; "fail" is set naming it when it is not.
std::optional<size_t> SizeParam(const HttpRequest& request, std::string_view name,
                                std::optional<HttpResponse>& fail) {
  absl::StatusOr<std::optional<uint64_t>> value = WholeNumberParam(request.query, name);
  if (!value.ok()) {
    fail = HttpError(400, "invalid_field", name, ToStd(value.status().message()));
    return std::nullopt;
  }
  return *value;
}

std::optional<double> ScoreParam(const HttpRequest& request, std::string_view name,
                                 std::optional<HttpResponse>& fail) {
  const std::optional<std::string> raw = DecodedQueryParam(request.query, name);
  if (!raw.has_value()) return std::nullopt;
  double value = 0;
  const auto [end, ec] = std::from_chars(raw->data(), raw->data() + raw->size(), value);
  if (ec != std::errc() || end != raw->data() + raw->size() || !(value >= 0 && value <= 1)) {
    fail = HttpError(400, "invalid_field", name,
                     absl::StrCat("'", ToAbsl(name), "' must be a score from 0 to 1"));
  }
  return value;
}

HttpResponse List(cases::CaseBook& book, const HttpRequest& request) {
  cases::CaseQuery q;
  std::optional<HttpResponse> fail;
  if (const std::optional<std::string> state = DecodedQueryParam(request.query, "state")) {
    if (*state == "unclosed") {
      q.unclosed = true;
    } else {
      absl::StatusOr<cases::CaseState> parsed = cases::ParseCaseState(*state);
      if (!parsed.ok()) {
        return HttpError(400, "invalid_field", "state",
                         absl::StrCat(parsed.status().message(), ", or unclosed"));
      }
      q.state = *parsed;
    }
  }
  if (const std::optional<std::string> owner = DecodedQueryParam(request.query, "owner")) {
    q.owner = *owner;
  }
  if (const std::optional<std::string> queue = DecodedQueryParam(request.query, "queue")) {
    if (*queue != "true" && *queue != "false") {
      return HttpError(400, "invalid_field", "queue", "'queue' must be true or false");
    }
    if (*queue == "true") q.owner = "";
  }
  q.subject = DecodedQueryParam(request.query, "subject").value_or("");
  q.reason = DecodedQueryParam(request.query, "reason").value_or("");
  q.min_score = ScoreParam(request, "min_score", fail);
  q.max_score = ScoreParam(request, "max_score", fail);
  if (const std::optional<std::string> overdue = DecodedQueryParam(request.query, "overdue")) {
    if (*overdue != "true" && *overdue != "false") {
      return HttpError(400, "invalid_field", "overdue", "'overdue' must be true or false");
    }
    q.overdue = *overdue == "true";
  }
  if (const std::optional<std::string> order = DecodedQueryParam(request.query, "order")) {
    if (*order == "priority") {
      q.order = cases::CaseOrder::kPriority;
    } else if (*order == "opened") {
      q.order = cases::CaseOrder::kOpened;
    } else if (*order == "updated") {
      q.order = cases::CaseOrder::kUpdated;
    } else if (*order == "alerts") {
      q.order = cases::CaseOrder::kAlerts;
    } else {
      return HttpError(400, "invalid_field", "order",
                       "'order' must be priority, opened, updated or alerts");
    }
  }
  q.offset = SizeParam(request, "offset", fail).value_or(0);
  q.limit = SizeParam(request, "limit", fail).value_or(50);
  if (fail.has_value()) return *std::move(fail);
  if (q.limit == 0 || q.limit > cases::kMaxCasePage) {
    return HttpError(400, "invalid_field", "limit",
                     absl::StrCat("'limit' must be from 1 to ", cases::kMaxCasePage));
  }
  absl::StatusOr<cases::CasePage> page = book.List(q);
  if (!page.ok()) return Refused(page.status());
  Json listed = Json::array();
  for (const cases::ListedCase& l : page->cases) listed.push_back(ListedJson(l));
  return JsonAnswer(200, {{"total", page->total}, {"offset", q.offset}, {"cases", listed}});
}

HttpResponse GetCase(cases::CaseBook& book, std::string_view case_id) {
  const std::string id(case_id);
  absl::StatusOr<cases::Case> c = book.Get(id);
  if (!c.ok()) return Refused(c.status());
  absl::StatusOr<std::vector<cases::Alert>> alerts = book.Alerts(id);
  if (!alerts.ok()) return Refused(alerts.status());
  absl::StatusOr<std::vector<cases::CaseEvent>> timeline = book.Timeline(id);
  if (!timeline.ok()) return Refused(timeline.status());
  Json a = Json::array();
  for (const cases::Alert& alert : *alerts) a.push_back(Json::parse(cases::AlertToJson(alert)));
  Json t = Json::array();
  for (const cases::CaseEvent& e : *timeline) {
    Json event = Json::parse(cases::CaseEventToJson(e));
    event.erase("source");
    event["sequence"] = e.sequence;
    t.push_back(std::move(event));
  }
  return JsonAnswer(200, {{"case", CaseJson(*c)}, {"alerts", a}, {"timeline", t}});
}

// A rate or a time that may be undefined (NaN): null then.
Json Maybe(double v) { return std::isnan(v) ? Json(nullptr) : Json(std::round(v * 1e4) / 1e4); }

Json OutcomesJson(const cases::OutcomeCounts& counts) {
  Json j = Json::object();
  j["unclosed"] = counts[0];
  for (size_t i = 1; i < counts.size(); ++i) {
    j[std::string(cases::CaseOutcomeName(static_cast<cases::CaseOutcome>(i)))] = counts[i];
  }
  return j;
}

HttpResponse Stats(const cases::CaseBook& book) {
  const cases::CaseTallyReport r = book.Tally();
  Json states = Json::object();
  for (size_t i = 0; i < r.states.size(); ++i) {
    states[std::string(cases::CaseStateName(static_cast<cases::CaseState>(i)))] = r.states[i];
  }
  Json days = Json::array();
  for (const cases::DayTally& d : r.days) {
    Json by_reason = Json::object();
    for (const auto& [reason, n] : d.opened_by_reason) by_reason[reason] = n;
    days.push_back({{"day", d.day},
                    {"opened", d.opened},
                    {"closed", d.closed},
                    {"opened_by_reason", by_reason}});
  }
  Json reasons = Json::array();
  for (const cases::ReasonTally& t : r.reasons) {
    reasons.push_back({{"reason", t.reason},
                       {"cases", t.cases},
                       {"outcomes", OutcomesJson(t.outcomes)},
                       {"false_positive_rate", Maybe(t.false_positive_rate())}});
  }
  Json bands = Json::array();
  for (const cases::BandTally& b : r.bands) {
    bands.push_back({{"band", b.band},
                     {"cases", b.cases},
                     {"outcomes", OutcomesJson(b.outcomes)},
                     {"false_positive_rate", Maybe(b.false_positive_rate())}});
  }
  return JsonAnswer(200, {{"cases", r.cases},
                          {"bands", bands},
                          {"overdue", r.overdue},
                          {"states", states},
                          {"outcomes", OutcomesJson(r.outcomes)},
                          {"close_hours_median", Maybe(r.close_hours_median)},
                          {"close_hours_p90", Maybe(r.close_hours_p90)},
                          {"days", days},
                          {"reasons", reasons}});
}

// The action's body: a JSON object of "text", "outcome" and "assignee", each a string, and
// for a screening review "sequence" (a whole number), "hit", "verdict" and "expires" (RFC
// 3339); an empty body is an empty object.
absl::StatusOr<cases::CaseAction> ReadAction(const HttpRequest& request, bool review) {
  cases::CaseAction action;
  if (request.body.empty()) return action;
  const Json j = Json::parse(request.body, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) {
    return absl::InvalidArgumentError("\"$\": the body must be a JSON object");
  }
  for (const auto& [key, value] : j.items()) {
    const bool common = key == "text" || key == "outcome" || key == "assignee";
    const bool reviewing =
        key == "sequence" || key == "hit" || key == "verdict" || key == "expires";
    if (!common && !(review && reviewing)) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", key, "\": not a field of ",
                       review ? "a screening review (sequence, hit, "
                                "verdict, expires, text)"
                              : "a case action (text, outcome, assignee)"));
    }
    if (key == "sequence") {
      if (!value.is_number_unsigned()) {
        return absl::InvalidArgumentError("\"sequence\": must be an alert's record sequence");
      }
    } else if (!value.is_string()) {
      return absl::InvalidArgumentError(absl::StrCat("\"", key, "\": must be a string"));
    }
  }
  action.text = j.value("text", "");
  action.assignee = j.value("assignee", "");
  if (j.contains("outcome")) {
    absl::StatusOr<cases::CaseOutcome> outcome =
        cases::ParseCaseOutcome(j["outcome"].get<std::string>());
    if (!outcome.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("\"outcome\": ", outcome.status().message()));
    }
    action.outcome = *outcome;
  }
  if (review) {
    if (!j.contains("sequence")) {
      return absl::InvalidArgumentError("\"sequence\": the alert's record is required");
    }
    action.alert = j["sequence"].get<uint64_t>();
    action.hit = j.value("hit", "");
    if (action.hit.empty()) return absl::InvalidArgumentError("\"hit\": is required");
    absl::StatusOr<cases::HitVerdict> verdict = cases::ParseHitVerdict(j.value("verdict", ""));
    if (!verdict.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("\"verdict\": ", verdict.status().message()));
    }
    action.verdict = *verdict;
    const std::string expires = j.value("expires", "");
    if ((action.verdict == cases::HitVerdict::kCleared) != !expires.empty()) {
      return absl::InvalidArgumentError(action.verdict == cases::HitVerdict::kCleared
                                            ? "\"expires\": a clearance needs its end"
                                            : "\"expires\": only a cleared verdict has an end");
    }
    if (!expires.empty()) {
      absl::StatusOr<UtcTime> until = ParseRfc3339(expires);
      if (!until.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("\"expires\": ", until.status().message()));
      }
      action.expires = *until;
    }
  }
  return action;
}

// An attachment's body and name: the file as the body, its media type the Content-Type.
cases::CaseAction ReadAttachment(const HttpRequest& request) {
  cases::CaseAction action;
  action.file_name = DecodedQueryParam(request.query, "name").value_or("");
  action.text = DecodedQueryParam(request.query, "text").value_or("");
  action.media_type = request.MediaType();
  action.content = request.body;
  return action;
}

HttpResponse GetAttachment(const cases::CaseBook& book, const HttpRequest& request,
                           std::string_view case_id) {
  const std::string sha = DecodedQueryParam(request.query, "sha256").value_or("");
  if (sha.size() != 64 || sha.find_first_not_of("0123456789abcdef") != std::string::npos) {
    return HttpError(400, "invalid_field", "sha256",
                     "'sha256' must be an attachment's digest: 64 lower-case hex digits");
  }
  const std::string id(case_id);
  absl::StatusOr<cases::CaseAttachment> attachment = book.Attachment(id, sha);
  if (!attachment.ok()) {
    if (absl::IsNotFound(attachment.status())) {
      return HttpError(404, "not_found", "sha256", ToStd(attachment.status().message()));
    }
    if (absl::IsDataLoss(attachment.status())) {
      return HttpError(500, "attachment_altered", "", ToStd(attachment.status().message()));
    }
    return Refused(attachment.status());
  }
  const cases::CaseEvent* event = &attachment->event;
  HttpResponse r;
  r.content_type = event->media_type;
  r.body = std::move(attachment->bytes);
  std::string name;
  for (char ch : event->file_name) name += ch == '"' ? '_' : ch;
  r.headers = {{"Content-Disposition", absl::StrCat("attachment; filename=\"", name, "\"")},
               {"X-Content-Type-Options", "nosniff"},
               {"Content-Security-Policy", "default-src 'none'; sandbox"}};
  return r;
}

HttpResponse Clearances(const cases::CaseBook& book) {
  Json list = Json::array();
  for (const screening::ScreeningClearance& c : book.Clearances()) {
    list.push_back(Json::parse(cases::ClearanceToJson(c)));
  }
  return JsonAnswer(200, {{"clearances", list}});
}

std::optional<cases::CaseEventKind> KindOf(CaseRoute route) {
  switch (route) {
    case CaseRoute::kClaim:
      return cases::CaseEventKind::kClaim;
    case CaseRoute::kRelease:
      return cases::CaseEventKind::kRelease;
    case CaseRoute::kAssign:
      return cases::CaseEventKind::kAssign;
    case CaseRoute::kNote:
      return cases::CaseEventKind::kNote;
    case CaseRoute::kEscalate:
      return cases::CaseEventKind::kEscalate;
    case CaseRoute::kClose:
      return cases::CaseEventKind::kClose;
    case CaseRoute::kApprove:
      return cases::CaseEventKind::kApproveClose;
    case CaseRoute::kReject:
      return cases::CaseEventKind::kRejectClose;
    case CaseRoute::kReopen:
      return cases::CaseEventKind::kReopen;
    case CaseRoute::kReviewHit:
      return cases::CaseEventKind::kReviewHit;
    default:
      return std::nullopt;
  }
}

}  // namespace

HttpResponse AnswerCaseRoute(cases::CaseBook& book, CaseRoute route, const HttpRequest& request,
                             std::string_view case_id, const cases::CaseActor& actor) {
  switch (route) {
    case CaseRoute::kList:
      return List(book, request);
    case CaseRoute::kGet:
      return GetCase(book, case_id);
    case CaseRoute::kStats:
      return Stats(book);
    case CaseRoute::kClearances:
      return Clearances(book);
    case CaseRoute::kAttachment:
      return GetAttachment(book, request, case_id);
    case CaseRoute::kAttach: {
      cases::CaseAction action = ReadAttachment(request);
      action.kind = cases::CaseEventKind::kAttach;
      action.case_id = std::string(case_id);
      absl::StatusOr<cases::Case> c = book.Act(actor, action);
      if (!c.ok()) return Refused(c.status());
      return JsonAnswer(200, {{"case", CaseJson(*c)}});
    }
    case CaseRoute::kNext: {
      absl::StatusOr<cases::Case> c = book.TakeNext(actor);
      if (!c.ok()) return Refused(c.status());
      return JsonAnswer(200, {{"case", CaseJson(*c)}});
    }
    default:
      break;
  }
  absl::StatusOr<cases::CaseAction> action = ReadAction(request, route == CaseRoute::kReviewHit);
  if (!action.ok()) return Refused(action.status());
  action->kind = *KindOf(route);
  action->case_id = std::string(case_id);
  absl::StatusOr<cases::Case> c = book.Act(actor, *action);
  if (!c.ok()) return Refused(c.status());
  return JsonAnswer(200, {{"case", CaseJson(*c)}});
}

}  // namespace vigil
