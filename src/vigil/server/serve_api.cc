#include "vigil/server/serve_api.h"

#include <array>
#include <charconv>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "vigil/audit/audit_export.h"
#include "vigil/audit/audit_verifier.h"
#include "vigil/common/json_text.h"
#include "vigil/common/status_macros.h"
#include "vigil/common/string_view.h"
#include "vigil/core/transaction.h"
#include "vigil/drift/drift_event.h"
#include "vigil/drift/drift_event_log.h"
#include "vigil/drift/drift_monitor.h"
#include "vigil/drift/drift_tap.h"
#include "vigil/engine/decision_recorder.h"
#include "vigil/ingest/payment_message.h"
#include "vigil/screening/screener.h"
#include "vigil/server/case_api.h"
#include "vigil/server/case_evidence.h"
#include "vigil/server/http_status.h"
#include "vigil/server/query_params.h"
#include "vigil/server/trace_context.h"
#include "vigil/server/workbench_assets.h"

namespace vigil {
namespace {

using Steady = std::chrono::steady_clock;

std::string_view View(absl::string_view s) { return {s.data(), s.size()}; }
absl::string_view Absl(std::string_view s) { return {s.data(), s.size()}; }

enum RouteId {
  kScore,
  kScoreBatch,
  kPolicyIngest,
  kActivate,
  kHealthz,
  kReadyz,
  kMetrics,
  kDrift,
  kDriftRelease,
  kAuditVerify,
  kAuditExport,
  kCases,
  kCaseStats,
  kCaseNext,
  kCase,
  kCaseDecision,
  kCaseProof,
  kCaseReport,
  kCaseSeries,
  kCaseClaim,
  kCaseRelease,
  kCaseAssign,
  kCaseNote,
  kCaseEscalate,
  kCaseClose,
  kCaseApprove,
  kCaseReject,
  kCaseReopen,
  kCaseReviewHit,
  kCaseAttach,
  kCaseAttachment,
  kClearances,
  kUi,
  kUiAsset,
  kUnmatched,  // 404 and server-answered errors
  kNumRoutes
};

// Who may call a route (docs/security.md): kPublic routes need nothing, kAnyRole any
// authenticated caller, the others that role (or admin).
// kMonitor: what is watched, no personal data (drift levels): an auditor or an analyst (and so
// a supervisor).
enum class Need { kPublic, kAnyRole, kScorer, kPolicyAdmin, kAuditor, kAdmin, kAnalyst, kMonitor };

struct RouteSpec {
  const char* method;
  const char* path;
  const char* label;
  Need need;
  // A successful answer is the server's own data, answered byte for byte: no path is redacted
  // from it (metrics, audit records and proofs whose hashes and signatures must come back
  // unchanged, the workbench's built files).
  bool own_data = false;
};
constexpr std::array<RouteSpec, kNumRoutes - 1> kRoutes = {{
    {"POST", "/v1/score", "score", Need::kScorer},
    {"POST", "/v1/score/batch", "score_batch", Need::kScorer},
    {"POST", "/v1/policy/ingest", "policy_ingest", Need::kPolicyAdmin},
    {"POST", "/v1/engine/activate", "engine_activate", Need::kPolicyAdmin},
    {"GET", "/healthz", "healthz", Need::kPublic},
    {"GET", "/readyz", "readyz", Need::kPublic},
    {"GET", "/metrics", "metrics", Need::kAnyRole, true},
    {"GET", "/v1/drift", "drift", Need::kMonitor},
    {"POST", "/v1/drift/release", "drift_release", Need::kAdmin},
    {"GET", "/v1/audit/verify", "audit_verify", Need::kAuditor},
    {"GET", "/v1/audit/export", "audit_export", Need::kAuditor, true},
    {"GET", "/v1/cases", "cases", Need::kAnalyst},
    {"GET", "/v1/cases/stats", "case_stats", Need::kAnalyst},
    {"POST", "/v1/cases/next", "case_next", Need::kAnalyst},
    {"GET", "/v1/cases/{case_id}", "case", Need::kAnalyst},
    {"GET", "/v1/cases/{case_id}/decision", "case_decision", Need::kAnalyst, true},
    {"GET", "/v1/cases/{case_id}/proof", "case_proof", Need::kAnalyst, true},
    {"GET", "/v1/cases/{case_id}/report", "case_report", Need::kAnalyst, true},
    {"GET", "/v1/cases/{case_id}/series", "case_series", Need::kAnalyst},
    {"POST", "/v1/cases/{case_id}/claim", "case_claim", Need::kAnalyst},
    {"POST", "/v1/cases/{case_id}/release", "case_release", Need::kAnalyst},
    {"POST", "/v1/cases/{case_id}/assign", "case_assign", Need::kAnalyst},
    {"POST", "/v1/cases/{case_id}/note", "case_note", Need::kAnalyst},
    {"POST", "/v1/cases/{case_id}/escalate", "case_escalate", Need::kAnalyst},
    {"POST", "/v1/cases/{case_id}/close", "case_close", Need::kAnalyst},
    {"POST", "/v1/cases/{case_id}/approve", "case_approve", Need::kAnalyst},
    {"POST", "/v1/cases/{case_id}/reject", "case_reject", Need::kAnalyst},
    {"POST", "/v1/cases/{case_id}/reopen", "case_reopen", Need::kAnalyst},
    {"POST", "/v1/cases/{case_id}/screening", "case_review_hit", Need::kAnalyst},
    {"POST", "/v1/cases/{case_id}/attachments", "case_attach", Need::kAnalyst},
    {"GET", "/v1/cases/{case_id}/attachment", "case_attachment", Need::kAnalyst, true},
    {"GET", "/v1/screening/clearances", "screening_clearances", Need::kAnalyst},
    // The workbench's page and files: code, no data (the page calls /v1/cases with a token).
    {"GET", "/ui", "ui", Need::kPublic, true},
    {"GET", "/ui/{asset}", "ui_asset", Need::kPublic, true},
}};

// Whether "path" matches "pattern", whose "{name}" segments match any one non-empty segment;
// *param is set to the last such segment.
bool PathMatches(std::string_view pattern, std::string_view path, std::string_view* param) {
  while (!pattern.empty() && !path.empty()) {
    const size_t p_end = std::min(pattern.find('/', 1), pattern.size());
    const size_t q_end = std::min(path.find('/', 1), path.size());
    const std::string_view p_seg = pattern.substr(0, p_end), q_seg = path.substr(0, q_end);
    if (p_seg.size() > 2 && p_seg[1] == '{') {
      if (q_seg.size() < 2) return false;
      *param = q_seg.substr(1);
    } else if (p_seg != q_seg) {
      return false;
    }
    pattern.remove_prefix(p_end);
    path.remove_prefix(q_end);
  }
  return pattern.empty() && path.empty();
}

CaseRoute CaseRouteOf(int route) {
  switch (route) {
    case kCases:
      return CaseRoute::kList;
    case kCaseStats:
      return CaseRoute::kStats;
    case kCaseNext:
      return CaseRoute::kNext;
    case kCase:
      return CaseRoute::kGet;
    case kCaseClaim:
      return CaseRoute::kClaim;
    case kCaseRelease:
      return CaseRoute::kRelease;
    case kCaseAssign:
      return CaseRoute::kAssign;
    case kCaseNote:
      return CaseRoute::kNote;
    case kCaseEscalate:
      return CaseRoute::kEscalate;
    case kCaseClose:
      return CaseRoute::kClose;
    case kCaseApprove:
      return CaseRoute::kApprove;
    case kCaseReject:
      return CaseRoute::kReject;
    case kCaseReviewHit:
      return CaseRoute::kReviewHit;
    case kCaseAttach:
      return CaseRoute::kAttach;
    case kCaseAttachment:
      return CaseRoute::kAttachment;
    case kClearances:
      return CaseRoute::kClearances;
    default:
      return CaseRoute::kReopen;
  }
}

// The roles a route admits (RoleAllows adds admin, and supervisor where analyst is); empty:
// any role.
absl::Span<const Role> RolesAdmitted(Need need) {
  static constexpr Role kScorer[] = {Role::kScorer};
  static constexpr Role kPolicyAdmin[] = {Role::kPolicyAdmin};
  static constexpr Role kAuditor[] = {Role::kAuditor};
  static constexpr Role kAdmin[] = {Role::kAdmin};
  static constexpr Role kAnalyst[] = {Role::kAnalyst};
  static constexpr Role kMonitor[] = {Role::kAuditor, Role::kAnalyst};
  switch (need) {
    case Need::kScorer:
      return kScorer;
    case Need::kPolicyAdmin:
      return kPolicyAdmin;
    case Need::kAuditor:
      return kAuditor;
    case Need::kAdmin:
      return kAdmin;
    case Need::kAnalyst:
      return kAnalyst;
    case Need::kMonitor:
      return kMonitor;
    default:
      return {};
  }
}

// The roles a route admits, for a refusal's message: "auditor or analyst".
std::string NeedName(Need need) {
  std::vector<std::string> names;
  for (Role r : RolesAdmitted(need)) names.emplace_back(RoleName(r));
  return names.empty() ? std::string("any role") : absl::StrJoin(names, " or ");
}

// The workbench's file "name" (workbench_assets.h): revalidated on each load (ETag), never
// framed, scripts from this origin only; the page talks to this origin alone.
HttpResponse Workbench(const HttpRequest& request, std::string_view name) {
  const WorkbenchAsset* asset = FindWorkbenchAsset(name);
  if (asset == nullptr) {
    return HttpError(404, "not_found", "",
                     absl::StrCat("the workbench has no file '", ToAbsl(name),
                                  "'; open /ui (docs/workbench.md)"));
  }
  HttpResponse r;
  r.headers = {{"ETag", std::string(asset->etag)},
               {"Cache-Control", "no-cache"},
               {"X-Content-Type-Options", "nosniff"},
               {"X-Frame-Options", "DENY"},
               {"Referrer-Policy", "no-referrer"},
               {"Content-Security-Policy",
                "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
                "img-src 'self' data: blob:; connect-src 'self'; font-src 'self'; "
                "base-uri 'none'; form-action 'none'; frame-ancestors 'none'"}};
  if (request.Header("If-None-Match") == asset->etag) {
    r.status = 304;
    r.content_type = "";
    return r;
  }
  r.content_type = std::string(asset->content_type);
  r.body = std::string(asset->body);
  return r;
}

// The events GET /v1/drift lists, the newest ones.
constexpr size_t kDriftEventsShown = 50;
// Records per page of GET /v1/audit/export: by default, and at most (a page is answered as one
// body; about 2 KiB a record).
constexpr uint64_t kAuditExportDefaultPage = 1'000;
constexpr uint64_t kAuditExportMaxPage = 10'000;
constexpr const char* kUnmatchedLabel = "other";

constexpr std::array<int, 14> kStatuses = {200, 400, 401, 403, 404, 405, 408,
                                           413, 415, 422, 431, 500, 503, 0};  // 0: any other
size_t StatusIndex(int status) {
  for (size_t i = 0; i + 1 < kStatuses.size(); ++i) {
    if (kStatuses[i] == status) return i;
  }
  return kStatuses.size() - 1;
}

HttpResponse UnsupportedMediaType(std::string_view got, std::string_view expected) {
  return HttpError(415, "unsupported_media_type", "Content-Type",
                   got.empty() ? absl::StrCat("a Content-Type is required: ", Absl(expected))
                               : absl::StrCat("Content-Type '", Absl(got), "' is not accepted: ",
                                              Absl(expected)));
}

// An admin call's JSON object body into *body; otherwise the error to answer (415, 400). "shape"
// names the members the error message shows ("{reason}").
std::optional<HttpResponse> JsonObjectBody(const HttpRequest& request, std::string_view shape,
                                           nlohmann::json* body) {
  static constexpr std::string_view kJson = "application/json";
  const std::string_view content_type = request.Header("Content-Type");
  if (request.MediaType() != kJson) return UnsupportedMediaType(content_type, kJson);
  *body = nlohmann::json::parse(request.body, nullptr, false);
  if (body->is_discarded()) {
    return HttpError(400, "invalid_json", "$", "the body is not valid JSON");
  }
  if (!body->is_object()) {
    return HttpError(400, "invalid_field", "$",
                     absl::StrCat("the body must be an object ", Absl(shape)));
  }
  return std::nullopt;
}

HttpResponse Json(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.body = std::move(body);
  return r;
}

std::string UnauthenticatedMessage(AccessDenial denial) {
  switch (denial) {
    case AccessDenial::kMalformed:
      return "the Authorization header must be \"Bearer <token>\"";
    case AccessDenial::kInvalid:
      return "the bearer token is not valid (unknown, revoked or malformed); ask an admin for "
             "one (vigil token create)";
    default:
      return "this endpoint needs a bearer token (Authorization: Bearer <token>) or a client "
             "certificate granted a role";
  }
}

}  // namespace

struct ServeApi::RouteMetrics {
  std::array<std::array<Counter*, kStatuses.size()>, kNumRoutes> requests{};
  std::array<LatencyHistogram*, kNumRoutes> duration{};
  std::array<Counter*, kNumAccessDenials> auth_failures{};  // [AccessDenial], kNone unused
  Counter* tls_failures = nullptr;
  // vigil_shed_total{class="unknown"} of the sheds before a body is read.
  Counter* shed_connections = nullptr;
  Counter* shed_workers = nullptr;
  Counter* shed_budget = nullptr;
  Counter* shed_audit = nullptr;  // refused on arrival: the audit log is behind
};

std::vector<std::string> ServeApi::Routes() {
  std::vector<std::string> out;
  for (const RouteSpec& r : kRoutes) out.push_back(absl::StrCat(r.method, " ", r.path));
  return out;
}

absl::StatusOr<std::unique_ptr<ServeApi>> ServeApi::Create(ServeApiOptions options,
                                                           WorkerPool* workers,
                                                           MetricsRegistry* metrics,
                                                           RequestLog* log) {
  std::unique_ptr<ServeApi> api(new ServeApi(std::move(options), workers, metrics, log));
  VIGIL_RETURN_IF_ERROR(api->RegisterMetrics());
  return api;
}

absl::Status ServeApi::RegisterMetrics() {
  auto m = std::make_unique<RouteMetrics>();
  for (int r = 0; r < kNumRoutes; ++r) {
    const std::string route = r < kNumRoutes - 1 ? kRoutes[r].label : kUnmatchedLabel;
    for (size_t s = 0; s < kStatuses.size(); ++s) {
      const std::string status = kStatuses[s] == 0 ? "other" : std::to_string(kStatuses[s]);
      VIGIL_ASSIGN_OR_RETURN(m->requests[r][s],
                             metrics_->AddCounter("vigil_http_requests_total",
                                                  "HTTP requests answered, by route and status.",
                                                  {{"route", route}, {"status", status}}));
    }
    VIGIL_ASSIGN_OR_RETURN(
        m->duration[r],
        metrics_->AddHistogram("vigil_http_request_duration_seconds",
                               "From the request parsed to its response handed to the I/O "
                               "thread, by route.",
                               {{"route", route}}));
  }
  for (int d = 1; d < kNumAccessDenials; ++d) {
    VIGIL_ASSIGN_OR_RETURN(
        m->auth_failures[d],
        metrics_->AddCounter("vigil_auth_failures_total",
                             "Requests refused by authentication (401: missing, malformed, "
                             "invalid) or authorization (403: forbidden), by reason.",
                             {{"reason", std::string(AccessDenialName(
                                             static_cast<AccessDenial>(d)))}}));
  }
  VIGIL_ASSIGN_OR_RETURN(m->tls_failures,
                         metrics_->AddCounter("vigil_tls_handshake_failures_total",
                                              "TLS handshakes that failed: no client "
                                              "certificate, or an untrusted or expired one, a "
                                              "protocol or cipher mismatch, plain HTTP to the "
                                              "TLS port.",
                                              {}));
  const auto shed = [this](const char* reason) {
    return metrics_->AddCounter(kShedMetric, kShedMetricHelp,
                                {{"class", "unknown"}, {"reason", reason}});
  };
  VIGIL_ASSIGN_OR_RETURN(m->shed_connections, shed("connections"));
  VIGIL_ASSIGN_OR_RETURN(m->shed_workers, shed("workers"));
  VIGIL_ASSIGN_OR_RETURN(m->shed_budget, shed("budget"));
  VIGIL_ASSIGN_OR_RETURN(m->shed_audit, shed("audit"));
  route_metrics_ = std::move(m);
  return absl::OkStatus();
}

void ServeApi::CountTlsFailure(std::string_view reason) {
  route_metrics_->tls_failures->Increment();
  log_->Event("warn", "TLS handshake failed", {{"reason", std::string(reason)}});
}

ServeApi::ServeApi(ServeApiOptions options, WorkerPool* workers, MetricsRegistry* metrics,
                   RequestLog* log)
    : options_(std::move(options)),
      workers_(workers),
      metrics_(metrics),
      log_(log),
      redactor_(options_.private_paths) {}

ServeApi::~ServeApi() = default;

void ServeApi::SetReady(ServeParts parts) {
  parts_ = parts;
  ready_.store(true, std::memory_order_release);
}

void ServeApi::CountRefused(int status, std::string_view code) {
  route_metrics_->requests[kUnmatched][StatusIndex(status)]->Increment();
  RequestLogEntry entry;
  entry.route = kUnmatchedLabel;
  entry.status = status;
  entry.error_code = code;
  if (code == "too_many_connections") {
    route_metrics_->shed_connections->Increment();
    entry.shed = "connections";
  }
  log_->Log(entry);
}

namespace {

// Replaces the message of every audit_unavailable error in "body" (a decision refused because
// its record could not be written: the store's own words name its files and errors) by what
// the caller may do. The rest of the body is left byte for byte.
void HideAuditFailures(std::string& body) {
  static constexpr std::string_view kError =
      R"("code":"audit_unavailable","field":"","message":")";
  static constexpr std::string_view kMessage =
      "the decision could not be recorded in the audit log, so it is not given; retry with "
      "the same id on another instance (this one is unready until restarted)";
  size_t at = 0;
  while ((at = body.find(kError, at)) != std::string::npos) {
    const size_t begin = at + kError.size();
    size_t end = begin;
    while (end < body.size() && body[end] != '"') end += body[end] == '\\' ? 2 : 1;
    if (end >= body.size()) return;
    body.replace(begin, end - begin, kMessage);
    at = begin + kMessage.size();
  }
}

}  // namespace

void ServeApi::PublicBody(int route, HttpResponse& response) const {
  if (route < kNumRoutes - 1 && kRoutes[route].own_data && response.status < 400) return;
  // A decision echoes the caller's ids, which must come back unchanged.
  const bool decisions = (route == kScore || route == kScoreBatch) && response.status < 400;
  if (decisions && route == kScore) return;
  if (response.status == 500 && response.error_code == "internal") {
    // What went wrong inside is the operator's to read (the request log has it), not the
    // caller's.
    response.body = JsonErrorBody("internal", "",
                                  "an internal error stopped this request; the server's log has "
                                  "the details");
    return;
  }
  if (route == kScore || route == kScoreBatch) HideAuditFailures(response.body);
  // A batch's item errors may carry an engine's message: the server's own paths go, the
  // decisions stay as decided. A verification report carries signed tree heads, whose base64
  // signatures may read as a path ("/Qx3/..."): only the configured paths go from it, so that
  // every hash and signature comes back byte for byte and still verifies.
  const bool configured_only = decisions || (route == kAuditVerify && response.status < 400);
  response.body =
      redactor_.Redact(response.body, configured_only ? PathRedactor::Mode::kConfiguredPaths
                                                      : PathRedactor::Mode::kAnyPath);
}

void ServeApi::Finish(int route, const HttpRequest& request, HttpResponse response,
                      Steady::time_point start, RequestLogEntry entry, HttpResponder respond,
                      bool authenticated) {
  response.authenticated = authenticated;
  PublicBody(route, response);
  const auto elapsed = Steady::now() - start;
  route_metrics_->requests[route][StatusIndex(response.status)]->Increment();
  route_metrics_->duration[route]->Record(elapsed);
  entry.method = request.method;
  entry.route = route < kNumRoutes - 1 ? kRoutes[route].label : kUnmatchedLabel;
  entry.target = request.path;
  entry.remote = request.remote;
  entry.status = response.status;
  entry.latency = std::chrono::duration_cast<std::chrono::microseconds>(elapsed);
  if (entry.error_code.empty()) entry.error_code = response.error_code;
  if (entry.error_message.empty()) entry.error_message = response.error_message;
  log_->Log(entry);
  std::move(respond)(std::move(response));
}

void ServeApi::Handle(HttpRequest request, HttpResponder respond) {
  const Steady::time_point start = Steady::now();
  int route = kUnmatched;
  std::string allow;
  std::string_view path_param;
  for (size_t i = 0; i < kRoutes.size(); ++i) {
    std::string_view param;
    if (!PathMatches(kRoutes[i].path, request.path, &param)) continue;
    if (request.method == kRoutes[i].method) {
      route = static_cast<int>(i);
      path_param = param;
      break;
    }
    allow = kRoutes[i].method;
  }
  if (route == kUnmatched) {
    HttpResponse r;
    if (!allow.empty()) {
      r = HttpError(405, "method_not_allowed", "",
                    absl::StrCat(request.method, " is not allowed on ", request.path, "; use ",
                                 allow));
      r.headers.push_back({"Allow", allow});
    } else {
      r = HttpError(404, "not_found", "",
                    absl::StrCat("no route ", request.method, " ", request.path,
                                 " (see docs/openapi.yaml)"));
    }
    return Finish(kUnmatched, request, std::move(r), start, {}, std::move(respond));
  }
  std::string actor;
  std::optional<Role> role;  // the caller's, when checked
  if (options_.access != nullptr && kRoutes[route].need != Need::kPublic) {
    AccessDecision access = options_.access->Check(request, RolesAdmitted(kRoutes[route].need));
    if (!access.allowed()) {
      route_metrics_->auth_failures[static_cast<int>(access.denial)]->Increment();
      RequestLogEntry entry;
      entry.actor = access.actor;
      entry.token_id = access.token_id;
      HttpResponse r = access.denial == AccessDenial::kForbidden
                           ? HttpError(403, "forbidden", "Authorization",
                                       absl::StrCat("the ", ToAbsl(RoleName(*access.role)),
                                                    " role may not call ", request.method, " ",
                                                    request.path, "; it needs ",
                                                    NeedName(kRoutes[route].need)))
                           : HttpError(401, "unauthenticated", "Authorization",
                                       UnauthenticatedMessage(access.denial));
      if (r.status == 401) r.headers.push_back({"WWW-Authenticate", "Bearer realm=\"vigil\""});
      return Finish(route, request, std::move(r), start, entry, std::move(respond));
    }
    actor = std::move(access.actor);
    role = access.role;
  } else if (!request.client_principal.empty()) {
    actor = absl::StrCat("tls:", Absl(request.client_principal));
  }
  // A valid credential was checked (or none is needed by the configuration).
  const bool authenticated = options_.access == nullptr || kRoutes[route].need != Need::kPublic;
  switch (route) {
    case kHealthz:
      return Finish(route, request, Json(200, R"({"status":"ok"})"), start, {},
                    std::move(respond), authenticated);
    case kReadyz:
      return Finish(route, request, Ready(), start, {}, std::move(respond), authenticated);
    case kMetrics:
      return Finish(route, request, Metrics(), start, {}, std::move(respond), authenticated);
    case kUi:
    case kUiAsset:
      return Finish(route, request, Workbench(request, route == kUi ? "index.html" : path_param),
                    start, {}, std::move(respond), authenticated);
    default:
      break;
  }
  if (!ready()) {
    return Finish(route, request,
                  HttpError(503, "not_ready", "",
                            "vigil is loading its model, policy and state; see GET /readyz"),
                  start, {}, std::move(respond), authenticated);
  }
  if (route == kScore || route == kScoreBatch) {
    // The audit log is behind (DecisionService::Congestion): refused on arrival, on this thread,
    // so that what the server cannot record costs it no worker, no parse and no decision.
    if (const absl::Status congestion = parts_.service->Congestion(); !congestion.ok()) {
      HttpResponse r = HttpError(503, "overloaded", "", View(congestion.message()));
      r.headers.push_back({"Retry-After", "1"});
      route_metrics_->shed_audit->Increment();
      RequestLogEntry entry;
      entry.shed = "audit";
      return Finish(route, request, std::move(r), start, entry, std::move(respond),
                    authenticated);
    }
  }
  if (route >= kCases && route <= kClearances) {
    std::optional<HttpResponse> refused;
    if (parts_.cases == nullptr) {
      refused = HttpError(404, "not_found", "",
                          absl::StrCat("this server keeps no cases: ", parts_.cases_off));
    } else if (!role.has_value() || actor.empty()) {
      refused = HttpError(403, "forbidden", "Authorization",
                          "cases are worked by named analysts: run with auth tokens (or mutual "
                          "TLS) and an analyst or supervisor credential");
    }
    if (refused.has_value()) {
      return Finish(route, request, *std::move(refused), start, {}, std::move(respond),
                    authenticated);
    }
  }
  // The rest may wait (the batcher, a duplicate in flight, an admin write): on the workers.
  auto shared = std::make_shared<std::pair<HttpRequest, HttpResponder>>(std::move(request),
                                                                        std::move(respond));
  const WorkerPool::Admission admission = workers_->Submit([this, route, start, shared,
                                                            authenticated,
                                                            case_id = std::string(path_param), role,
                                                            actor = std::move(actor)]() mutable {
    const HttpRequest& req = shared->first;
    RequestLogEntry entry;
    entry.actor = actor;
    HttpResponse response;
    switch (route) {
      case kScore:
      case kScoreBatch: {
        {
          absl::MutexLock lock(&answering_mu_);
          ++answering_;
        }
        // Answered when decided and recorded, maybe from another thread: "shared" keeps the
        // body the decision's views point into.
        Score(req, route == kScoreBatch, start, actor,
              [this, route, start, shared, authenticated, actor](HttpResponse scored,
                                                                 ScoreOutcome outcome) {
                RequestLogEntry e;  // views the outcome's strings
                e.actor = actor;
                e.trace_id = outcome.trace_id;
                e.transaction_id = outcome.transaction_id;
                e.action = outcome.action;
                e.degraded = outcome.degraded;
                e.degraded_reason = outcome.degraded_reason;
                e.error_code = outcome.error_code;
                e.shed = outcome.shed;
                Finish(route, shared->first, std::move(scored), start, e,
                       std::move(shared->second), authenticated);
                absl::MutexLock lock(&answering_mu_);
                --answering_;
              });
        return;
      }
      case kPolicyIngest:
        response = IngestPolicy(req, actor);
        break;
      case kActivate:
        response = Activate(req);
        break;
      case kDrift:
        // On a worker: the exact statistics take the monitor's lock for a few milliseconds.
        response = Drift();
        break;
      case kDriftRelease:
        response = DriftRelease(req, actor);
        break;
      case kAuditVerify:
        // On a worker: it reads the whole log.
        response = AuditVerify(req);
        break;
      case kAuditExport:
        response = AuditExport(req);
        break;
      case kCaseDecision:
        response =
            AnswerCaseDecision({parts_.cases, parts_.audit_log, parts_.deployment}, req, case_id);
        break;
      case kCaseProof:
        response =
            AnswerCaseProof({parts_.cases, parts_.audit_log, parts_.deployment}, req, case_id);
        break;
      case kCaseSeries:
        response =
            AnswerCaseSeries({parts_.cases, parts_.audit_log, parts_.deployment}, req, case_id);
        break;
      case kCaseReport:
        response = AnswerCaseReport(
            {parts_.cases, parts_.audit_log, parts_.deployment, parts_.report_entity}, req,
            case_id);
        break;
      default:  // the cases' routes; on a worker: an action waits for its durable record
        response = AnswerCaseRoute(*parts_.cases, CaseRouteOf(route), req, case_id,
                                   {actor, role == Role::kAnalyst ? cases::CaseRole::kAnalyst
                                                                  : cases::CaseRole::kSupervisor});
        break;
    }
    Finish(route, req, std::move(response), start, entry, std::move(shared->second),
           authenticated);
  });
  if (admission != WorkerPool::Admission::kQueued) {
    HttpResponse r = HttpError(
        503, "overloaded", "",
        admission == WorkerPool::Admission::kQueueTooSlow
            ? "every worker is busy and the requests waiting have waited too long; retry"
            : "every worker is busy and the request queue is full; retry");
    r.headers.push_back({"Retry-After", "1"});
    route_metrics_->shed_workers->Increment();
    RequestLogEntry entry;
    entry.shed = "workers";
    Finish(route, shared->first, std::move(r), start, entry, std::move(shared->second),
           authenticated);
  }
}

void ServeApi::Score(const HttpRequest& request, bool batch, Steady::time_point arrival,
                     std::string_view actor, ScoredFn scored) {
  const auto answer = [&scored](HttpResponse r, ScoreOutcome outcome = {}) {
    std::move(scored)(std::move(r), std::move(outcome));
  };
  const std::string_view content_type = request.Header("Content-Type");
  const std::optional<MessageFormat> format = MessageFormatOfMediaType(request.MediaType());
  if (!format.has_value()) return answer(UnsupportedMediaType(content_type, kPaymentMediaTypes));
  if (options_.model_required && parts_.deployment->Current()->champion == nullptr) {
    return answer(ModelRequired());
  }
  ScoreRequest score_request;
  score_request.format = *format;
  const std::string_view budget = request.Header("X-Vigil-Budget-Ms");
  if (!budget.empty()) {
    int64_t ms = 0;
    const auto [end, ec] = std::from_chars(budget.data(), budget.data() + budget.size(), ms);
    if (ec != std::errc() || end != budget.data() + budget.size() || ms < 1 ||
        ms > options_.max_budget.count()) {
      return answer(HttpError(400, "invalid_field", "X-Vigil-Budget-Ms",
                              absl::StrCat("X-Vigil-Budget-Ms must be an integer number of "
                                           "milliseconds from 1 to ",
                                           options_.max_budget.count(), ", not '", Absl(budget),
                                           "'")));
    }
    score_request.budget = std::chrono::milliseconds(ms);
  }
  // The budget runs from the arrival: what was spent queued for a worker is gone.
  const auto waited =
      std::chrono::duration_cast<std::chrono::microseconds>(Steady::now() - arrival);
  const std::chrono::microseconds remaining =
      score_request.budget.value_or(options_.score_budget) - waited;
  if (remaining.count() <= 0) {
    HttpResponse shed = HttpError(
        503, "overloaded", "",
        absl::StrCat("the request waited ", waited.count() / 1000,
                     " ms for a worker, its whole SLA budget: not decided; retry"));
    shed.headers.push_back({"Retry-After", "1"});
    route_metrics_->shed_budget->Increment();
    ScoreOutcome outcome;
    outcome.shed = "budget";
    return answer(std::move(shed), std::move(outcome));
  }
  score_request.budget = remaining;
  const std::optional<TraceContext> parent = TraceContext::Parse(request.Header("traceparent"));
  const TraceContext ours = parent.has_value() ? parent->Child() : TraceContext::Generate();
  score_request.traceparent = ours.ToTraceparent();
  score_request.actor = std::string(actor);
  std::string traceparent = score_request.traceparent;
  std::string trace_id = ours.TraceIdHex();
  auto replied = [this, traceparent = std::move(traceparent), trace_id = std::move(trace_id),
                  actor = std::string(actor),
                  scored = std::move(scored)](ScoreReply reply) mutable {
    if (!reply.conflicts.empty()) {
      // A batch is answered 200: its refused items get a line of their own, as a single
      // transaction's 409 does (an id reused for another payment is worth an analyst's look).
      constexpr size_t kNamed = 20;
      std::vector<std::string> named(
          reply.conflicts.begin(),
          reply.conflicts.begin() +
              static_cast<std::ptrdiff_t>(std::min(kNamed, reply.conflicts.size())));
      log_->Event("warn", "idempotency conflicts in a batch: ids reused for other payments",
                  {{"count", absl::StrCat(reply.conflicts.size())},
                   {"transaction_ids", absl::StrJoin(named, ",")},
                   {"trace_id", trace_id},
                   {"actor", actor}});
    }
    HttpResponse response;
    response.status = reply.status;
    response.body = std::move(reply.body);
    response.headers.push_back({"traceparent", std::move(traceparent)});
    if (reply.status == 503) response.headers.push_back({"Retry-After", "1"});
    ScoreOutcome outcome;
    outcome.trace_id = std::move(trace_id);
    outcome.transaction_id = std::move(reply.transaction_id);
    outcome.action = std::move(reply.action);
    outcome.degraded = reply.degraded;
    outcome.degraded_reason = std::move(reply.degraded_reason);
    outcome.error_code = std::move(reply.error_code);
    outcome.shed = std::move(reply.shed_reason);
    std::move(scored)(std::move(response), std::move(outcome));
  };
  if (batch) {
    parts_.service->ScoreBatchThen(request.body, score_request, std::move(replied));
  } else {
    parts_.service->ScoreThen(request.body, score_request, std::move(replied));
  }
}

void ServeApi::WaitForAnswers() {
  absl::MutexLock lock(&answering_mu_);
  answering_mu_.Await(absl::Condition(
      +[](int64_t* n) { return *n == 0; }, &answering_));
}

HttpResponse ServeApi::IngestPolicy(const HttpRequest& request, std::string_view actor) {
  const std::string_view content_type = request.Header("Content-Type");
  const std::string media = request.MediaType();
  if (media != "application/yaml" && media != "application/x-yaml" && media != "text/yaml" &&
      media != "application/json") {
    return UnsupportedMediaType(
        content_type, "application/yaml, application/x-yaml, text/yaml or application/json");
  }
  bool activate = true;
  if (std::optional<std::string_view> a = QueryParam(request.query, "activate"); a.has_value()) {
    if (*a == "true" || *a == "1") {
      activate = true;
    } else if (*a == "false" || *a == "0") {
      activate = false;
    } else {
      return HttpError(400, "invalid_field", "activate",
                       absl::StrCat("the query parameter activate must be true or false, not '",
                                    Absl(*a), "'"));
    }
  }
  // Who, as authenticated (token id, certificate subject), and from where.
  std::string author = actor.empty() ? "api" : std::string(actor);
  if (!request.remote.empty()) absl::StrAppend(&author, " from ", Absl(request.remote));
  absl::StatusOr<PolicyStore::Entry> entry =
      parts_.policies->Add(request.body, "request", author);
  if (!entry.ok()) {
    if (entry.status().code() != absl::StatusCode::kInvalidArgument) {
      return HttpError(HttpStatusOf(entry.status().code()), "internal", "",
                       View(entry.status().message()));
    }
    std::string body = "{\"error\":{\"code\":\"policy_invalid\",\"field\":\"\",\"message\":";
    const std::string_view message = View(entry.status().message());
    AppendJsonString(message.substr(0, message.find('\n')), &body);
    body += ",\"details\":[";
    // One detail per problem: a problem starts with "request:LINE:COLUMN:"; the lines after it
    // (the source line, the caret, a hint) belong to it.
    std::vector<std::string> problems;
    for (absl::string_view line : absl::StrSplit(Absl(message), '\n', absl::SkipWhitespace())) {
      if (problems.empty() || absl::StartsWith(line, "request:")) {
        problems.emplace_back(line);
      } else {
        absl::StrAppend(&problems.back(), "\n", line);
      }
    }
    for (size_t i = 0; i < problems.size(); ++i) {
      if (i > 0) body += ",";
      AppendJsonString(problems[i], &body);
    }
    body += "]}}";
    HttpResponse invalid = Json(422, std::move(body));
    invalid.error_code = "policy_invalid";
    invalid.error_message = std::string(message.substr(0, message.find('\n')));
    return invalid;
  }
  if (activate) {
    if (absl::Status s = parts_.policies->Activate(entry->id, author); !s.ok()) {
      return HttpError(HttpStatusOf(s.code()), "internal", "", View(s.message()));
    }
  }
  const std::shared_ptr<const Policy> active = parts_.policies->Active();
  const bool is_active = parts_.policies->active_id() == entry->id;
  std::string tag = absl::StrCat(entry->version, "@", entry->sha256.substr(0, 12));
  if (is_active && active != nullptr) tag = active->tag();
  nlohmann::json out = {{"id", entry->id},       {"version", entry->version},
                        {"sha256", entry->sha256}, {"tag", tag},
                        {"active", is_active}};
  return Json(200, out.dump());
}

HttpResponse ServeApi::Activate(const HttpRequest& request) {
  nlohmann::json body;
  if (std::optional<HttpResponse> refused =
          JsonObjectBody(request, "{model_ref, traffic_weight, shadow}", &body)) {
    return *std::move(refused);
  }
  std::string ref;
  double weight = 0;
  bool shadow = false;
  for (const auto& [key, value] : body.items()) {
    if (key == "model_ref") {
      if (!value.is_string()) {
        return HttpError(400, "invalid_field", "$.model_ref", "model_ref must be a string");
      }
      ref = value.get<std::string>();
    } else if (key == "traffic_weight") {
      if (!value.is_number()) {
        return HttpError(400, "invalid_field", "$.traffic_weight",
                         "traffic_weight must be a number from 0 to 1");
      }
      weight = value.get<double>();
    } else if (key == "shadow") {
      if (!value.is_boolean()) {
        return HttpError(400, "invalid_field", "$.shadow", "shadow must be true or false");
      }
      shadow = value.get<bool>();
    } else {
      return HttpError(400, "invalid_field", absl::StrCat("$.", key),
                       absl::StrCat("unknown member '", key,
                                    "' (expected model_ref, traffic_weight, shadow)"));
    }
  }
  if (ref.empty()) {
    return HttpError(400, "invalid_field", "$.model_ref",
                     "model_ref is required: a model's SHA-256 or a unique prefix of at least 8 "
                     "hex digits (vigil model add prints it)");
  }
  absl::StatusOr<std::shared_ptr<const ModelDeployment::Snapshot>> snapshot =
      parts_.deployment->Activate(ref, weight, shadow);
  if (!snapshot.ok()) {
    const std::string_view message = View(snapshot.status().message());
    const int status = HttpStatusOf(snapshot.status().code());
    switch (snapshot.status().code()) {
      case absl::StatusCode::kNotFound:
        return HttpError(status, "model_not_found", "$.model_ref", message);
      case absl::StatusCode::kInvalidArgument:
      case absl::StatusCode::kFailedPrecondition:
        return HttpError(status, "invalid_field",
                         absl::StrContains(Absl(message), "traffic_weight") ? "$.traffic_weight"
                         : absl::StrContains(Absl(message), "shadow")       ? "$.shadow"
                                                                            : "$.model_ref",
                         message);
      default:
        return HttpError(status, "internal", "", message);
    }
  }
  const auto model = [](const std::shared_ptr<const ModelDeployment::Model>& m) {
    if (m == nullptr) return nlohmann::json(nullptr);
    return nlohmann::json{{"ref", m->ref}, {"model_version", m->version}};
  };
  nlohmann::json out = {{"champion", model((*snapshot)->champion)},
                        {"challenger", model((*snapshot)->challenger)},
                        {"shadow", model((*snapshot)->shadow)}};
  if ((*snapshot)->challenger != nullptr) {
    out["challenger"]["traffic_weight"] = (*snapshot)->traffic_weight;
  }
  return Json(200, out.dump());
}

HttpResponse ServeApi::ModelRequired() {
  return HttpError(503, "model_required", "",
                   "model.required is set and no model is active: nothing is decided until a "
                   "model is activated (POST /v1/engine/activate)");
}

HttpResponse ServeApi::Ready() const {
  if (!ready()) {
    return HttpError(503, "not_ready", "",
                     "vigil is loading its model, policy and state");
  }
  if (parts_.audit_log != nullptr) {
    // A log that cannot record would make every decision a 503: not ready for traffic. Why it
    // stopped (the disk, the file) is in the server's log.
    if (absl::Status s = parts_.audit_log->health(); !s.ok()) {
      HttpResponse r = HttpError(503, "audit_unavailable", "",
                                 "the audit log stopped after a failed write: no decision can "
                                 "be recorded; the server's log says why");
      r.error_message = std::string(View(s.message()));
      return r;
    }
  }
  if (absl::Status s = parts_.service->Health(); !s.ok()) {
    // A cluster node cut off from the log: it cannot get a payment decided.
    HttpResponse r =
        HttpError(503, "cluster_unavailable", "",
                  absl::StrCat("this node cannot reach the cluster's log: ", s.message()));
    r.headers.push_back({"Retry-After", "1"});
    return r;
  }
  const auto deployment = parts_.deployment->Current();
  if (options_.model_required && deployment->champion == nullptr) {
    return ModelRequired();
  }
  const std::shared_ptr<const Policy> policy = parts_.policies->Active();
  const std::string model =
      deployment->champion != nullptr ? deployment->champion->version : std::string();
  nlohmann::json out = {{"status", "ready"},
                        {"policy_version", policy != nullptr ? policy->tag() : ""},
                        {"model_version", model},
                        // Without a champion every payment is decided on the rules alone.
                        {"model", model.empty() ? "none" : model}};
  if (parts_.screener != nullptr) out["screening_lists"] = parts_.screener->Current()->versions();
  return Json(200, out.dump());
}

HttpResponse ServeApi::AuditVerify(const HttpRequest& request) const {
  if (parts_.audit_log == nullptr) {
    return HttpError(404, "not_found", "", "this server keeps no audit log");
  }
  audit::VerifyOptions options;
  // What is durable now; records appended meanwhile are left for the next call.
  options.up_to = parts_.audit_log->size();
  if (const std::optional<std::string_view> param = QueryParam(request.query, "from");
      param.has_value()) {
    const std::string_view from = *param;
    const auto [end, ec] = std::from_chars(from.data(), from.data() + from.size(), options.from);
    if (ec != std::errc() || end != from.data() + from.size()) {
      return HttpError(400, "invalid_field", "from", "'from' must be a sequence number");
    }
  }
  absl::StatusOr<audit::VerifyReport> report = audit::VerifyAuditLog(*parts_.audit_log, options);
  if (!report.ok()) {
    return HttpError(HttpStatusOf(report.status().code()), "audit_unreadable", "",
                     View(report.status().message()));
  }
  // A damaged log is the server's failure, not the caller's: 500 with the report.
  return Json(report->intact() ? 200 : 500, audit::VerifyReportToJson(*report));
}

HttpResponse ServeApi::AuditExport(const HttpRequest& request) const {
  if (parts_.audit_log == nullptr) {
    return HttpError(404, "not_found", "", "this server keeps no audit log");
  }
  audit::ExportRange range;
  range.max_records = kAuditExportDefaultPage;
  const std::string_view query = request.query;
  for (const char* name : {"since", "until"}) {
    const std::optional<std::string> text = DecodedQueryParam(query, name);
    if (!text.has_value()) {
      if (QueryParam(query, name).has_value()) {
        return HttpError(400, "invalid_field", name, "malformed percent-escape");
      }
      continue;
    }
    absl::StatusOr<UtcTime> t = ParseRfc3339(*text);
    if (!t.ok()) {
      return HttpError(400, "invalid_field", name,
                       absl::StrCat("'", name, "' must be an RFC 3339 time: ",
                                    t.status().message()));
    }
    (std::string_view(name) == "since" ? range.since : range.until) = *t;
  }
  std::optional<std::string> tx = DecodedQueryParam(query, "transaction_id");
  if (!tx.has_value() && QueryParam(query, "transaction_id").has_value()) {
    return HttpError(400, "invalid_field", "transaction_id", "malformed percent-escape");
  }
  if (tx.has_value()) {
    if (tx->empty() || range.since || range.until || QueryParam(query, "from")) {
      return HttpError(400, "invalid_field", "transaction_id",
                       "'transaction_id' names one non-empty id and excludes since, until and "
                       "from");
    }
    range.transaction_id = *std::move(tx);
  }
  for (const char* name : {"from", "limit"}) {
    const std::optional<std::string_view> param = QueryParam(query, name);
    if (!param.has_value()) continue;
    uint64_t value = 0;
    const auto [end, ec] = std::from_chars(param->data(), param->data() + param->size(), value);
    const bool limit = std::string_view(name) == "limit";
    if (ec != std::errc() || end != param->data() + param->size() ||
        (limit && (value < 1 || value > kAuditExportMaxPage))) {
      return HttpError(400, "invalid_field", name,
                       limit ? absl::StrCat("'limit' must be a number of records from 1 to ",
                                            kAuditExportMaxPage)
                             : std::string("'from' must be a sequence number"));
    }
    (limit ? range.max_records : range.from) = value;
  }
  // Sealed fields stay sealed: the server holds only the public half of the key-encryption
  // key. The lines carry their data keys, wrapped, so `vigil audit open --kek` opens the body
  // offline.
  HttpResponse r;
  r.content_type = "application/x-ndjson";
  absl::StatusOr<audit::ExportSummary> summary = audit::WriteExport(
      *parts_.audit_log, range, /*opener=*/nullptr, AuditRecordViewJson,
      [&r](std::string_view line) {
        r.body.append(line);
        r.body.push_back('\n');
        return absl::OkStatus();
      });
  if (!summary.ok()) {
    const int status = HttpStatusOf(summary.status().code());
    if (summary.status().code() == absl::StatusCode::kNotFound) {
      return HttpError(status, "not_found", "transaction_id", View(summary.status().message()));
    }
    return HttpError(status, "audit_unreadable", "", View(summary.status().message()));
  }
  r.headers.push_back({"X-Vigil-Records", absl::StrCat(summary->exported)});
  if (summary->next_from.has_value()) {
    r.headers.push_back({"X-Vigil-Next-From", absl::StrCat(*summary->next_from)});
  }
  return r;
}

HttpResponse ServeApi::Metrics() const {
  if (options_.before_scrape) options_.before_scrape();
  HttpResponse r;
  r.content_type = std::string(View(MetricsRegistry::kContentType));
  r.body = metrics_->RenderPrometheusText();
  return r;
}

HttpResponse ServeApi::DriftRelease(const HttpRequest& request, std::string_view actor) {
  if (parts_.drift_monitor == nullptr) {
    return HttpError(404, "drift_off", "",
                     "drift monitoring is off: there is no freeze to release");
  }
  nlohmann::json body;
  if (std::optional<HttpResponse> refused = JsonObjectBody(request, "{reason}", &body)) {
    return *std::move(refused);
  }
  std::string reason;
  for (const auto& [key, value] : body.items()) {
    if (key != "reason") {
      return HttpError(400, "invalid_field", absl::StrCat("$.", key),
                       absl::StrCat("unknown member '", key, "' (expected reason)"));
    }
    if (!value.is_string()) {
      return HttpError(400, "invalid_field", "$.reason", "reason must be a string");
    }
    reason = value.get<std::string>();
  }
  // The release is on the record (the drift events, the log): it must say why.
  if (reason.empty() || reason.size() > 1000) {
    return HttpError(400, "invalid_field", "$.reason",
                     "reason is required: why the freeze may be lifted, 1 to 1000 characters");
  }
  absl::StatusOr<drift::DriftEvent> released = parts_.drift_monitor->Release(actor, reason);
  if (absl::IsFailedPrecondition(released.status())) {
    return HttpError(409, "not_frozen", "", View(released.status().message()));
  }
  if (!released.ok()) {
    // Released, but its event could not be stored: say so (the log has the WARN line).
    return HttpError(500, "internal", "",
                     absl::StrCat("the freeze was released but its event was not stored: ",
                                  released.status().message()));
  }
  const std::string level(drift::DriftLevelName(parts_.drift_monitor->level()));
  nlohmann::json out = {{"released", true},
                        {"level", level},
                        {"frozen", parts_.drift_monitor->frozen()},
                        {"event", nlohmann::json::parse(drift::DriftEventToJson(*released),
                                                        nullptr, false)}};
  return Json(200, out.dump());
}

HttpResponse ServeApi::Drift() const {
  if (parts_.drift_monitor == nullptr) {
    return HttpError(404, "drift_off", "",
                     "drift monitoring is off: no reference profile (set drift.profile, or put "
                     "reference_profile.json beside the model file; docs/serve.md)");
  }
  nlohmann::json out = nlohmann::json::parse(
      drift::DriftStateToJson(parts_.drift_monitor->State(/*exact=*/true)), nullptr, false);
  if (!out.is_object()) return HttpError(500, "internal", "", "the drift state is not JSON");
  // The state counts its events in "events"; here that member lists the newest of them (oldest
  // first), and the count moves to "events_total".
  out["events_total"] = std::move(out["events"]);
  nlohmann::json events = nlohmann::json::array();
  for (const drift::DriftEvent& e : parts_.drift_events->Recent(kDriftEventsShown)) {
    events.push_back(nlohmann::json::parse(drift::DriftEventToJson(e), nullptr, false));
  }
  out["events"] = std::move(events);
  out["dropped_rows"] = parts_.drift_tap->dropped();
  return Json(200, out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace vigil
