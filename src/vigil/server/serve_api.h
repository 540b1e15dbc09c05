// ServeApi: the routes of `vigil serve` (docs/openapi.yaml) over the engine's parts.
//
//   POST /v1/score            one transaction → Decision          (workers)
//   POST /v1/score/batch      an array of them → {"results":[..]} (workers)
//   POST /v1/policy/ingest    a policy (YAML or JSON) → stored, activated unless ?activate=false
//   POST /v1/engine/activate  {model_ref, traffic_weight, shadow} → the deployment
//   GET  /healthz             alive
//   GET  /readyz              200 once policy, lists, state (and a model, when required) are
//                             loaded, naming the model or `none`; 503 before
//   GET  /metrics             Prometheus text
//   GET  /v1/drift            the drift monitor's state and recent events (404 when off)
//   GET  /v1/audit/verify     checks the audit log (?from=SEQ): 200 intact, 500 damaged
//   GET  /v1/audit/export     a page of the log's records
//   /v1/cases...              the analysts' queue, cases and actions (CaseApi, docs/cases.md)
//
// Every route but /healthz and /readyz checks its caller (ApiAccess): scoring needs the
// scorer role, policy ingest and activation policy-admin, drift and audit auditor, cases
// analyst (or supervisor), /metrics any role; 401 without a valid credential, 403 for a role that
// may not.
//
// Requests that may wait (scoring, admin writes) run on a bounded WorkerPool; a full pool
// answers 503 overloaded with Retry-After at once. Every response is counted by route and status,
// and logged (errors and degraded decisions always, the rest sampled). No body names a file of
// the server (PathRedactor), and a 500 says only that the log has the details.
//
// Thread safety: Handle from any I/O thread; SetReady once, from any thread.
#ifndef VIGIL_SERVER_SERVE_API_H_
#define VIGIL_SERVER_SERVE_API_H_

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "vigil/cases/suspicion_report.h"
#include "vigil/decision/model_deployment.h"
#include "vigil/metrics/metrics_registry.h"
#include "vigil/rules/policy_store.h"
#include "vigil/server/api_access.h"
#include "vigil/server/decision_service.h"
#include "vigil/server/http_server.h"
#include "vigil/server/path_redactor.h"
#include "vigil/server/request_log.h"
#include "vigil/server/worker_pool.h"

namespace vigil {

namespace audit {
class AuditLog;
}  // namespace audit
namespace cases {
class CaseBook;
}  // namespace cases
namespace drift {
class DriftEventLog;
class DriftMonitor;
class DriftTap;
}  // namespace drift
namespace screening {
class Screener;
}  // namespace screening

// What the routes serve once loaded. Owned by the caller; must outlive the ServeApi's use.
struct ServeParts {
  ScoringService* service = nullptr;  // DecisionService, or a cluster node's ClusterScoring
  PolicyStore* policies = nullptr;
  ModelDeployment* deployment = nullptr;
  // Drift monitoring: all three set, or all null when it is off (GET /v1/drift is then 404).
  drift::DriftMonitor* drift_monitor = nullptr;
  drift::DriftEventLog* drift_events = nullptr;
  drift::DriftTap* drift_tap = nullptr;
  // The audit log of the decisions: /readyz is 503 while it cannot record; null: none.
  audit::AuditLog* audit_log = nullptr;
  // The watchlists decisions are screened against (/readyz lists their versions); null: none.
  const screening::Screener* screener = nullptr;
  // The analysts' cases (/v1/cases); null: none, and "cases_off" says why.
  cases::CaseBook* cases = nullptr;
  std::string cases_off;
  // Who reports in the report drafts of suspicious cases (cases.report_*, the FX table's
  // reporting currency).
  cases::ReportingEntity report_entity;
};

struct ServeApiOptions {
  std::chrono::milliseconds max_budget{800};  // X-Vigil-Budget-Ms upper bound
  // The SLA budget of a scoring request (unless it brings its own), counted from the request's
  // arrival: time spent waiting for a worker is taken from it, and a request that waited its
  // whole budget is shed (503) instead of decided late.
  std::chrono::microseconds score_budget{200'000};
  // Called before /metrics renders, to refresh gauges read at scrape time.
  std::function<void()> before_scrape;
  // Who may call what; null: no checks (`auth: none`). Must outlive the ServeApi.
  const ApiAccess* access = nullptr;
  // model.required: without a champion /readyz answers 503 model_required and nothing is
  // scored (503 model_required) instead of being decided on the rules alone.
  bool model_required = false;
  // The server's own paths (data dir, model, policy, keys, lists) with the label that replaces
  // each in a response body (PathRedactor); other absolute paths are replaced too, except in
  // decisions.
  std::vector<std::pair<std::string, std::string>> private_paths;
};

class ServeApi final : public HttpHandler {
 public:
  // The routes served, "METHOD PATH" (what `vigil serve --routes` prints).
  static std::vector<std::string> Routes();

  // Registers the HTTP metrics in "metrics". "workers", "metrics" and "log" must outlive the
  // ServeApi.
  static absl::StatusOr<std::unique_ptr<ServeApi>> Create(ServeApiOptions options,
                                                          WorkerPool* workers,
                                                          MetricsRegistry* metrics,
                                                          RequestLog* log);
  ~ServeApi() override;

  // The parts are loaded: the scoring and admin routes start answering, /readyz turns 200.
  void SetReady(ServeParts parts);
  bool ready() const { return ready_.load(std::memory_order_acquire); }

  void Handle(HttpRequest request, HttpResponder respond) override;

  // Waits until every scoring request handed to the workers is answered: after the workers
  // stopped, before the HTTP server stops (a decision waiting for its durable record is
  // answered from the audit log's completion, not by a worker).
  void WaitForAnswers();

  // Counts (and logs) an error the HTTP server answered itself.
  void CountRefused(int status, std::string_view code);
  // Counts (and logs) a TLS handshake that failed (no certificate, an untrusted or expired
  // one, a protocol mismatch); "reason" is OpenSSL's, never secret.
  void CountTlsFailure(std::string_view reason);

  struct RouteMetrics;

 private:
  ServeApi(ServeApiOptions options, WorkerPool* workers, MetricsRegistry* metrics,
           RequestLog* log);
  absl::Status RegisterMetrics();

  // What a scoring request's log line says beyond the HTTP facts.
  struct ScoreOutcome {
    std::string trace_id, transaction_id, action, degraded_reason, error_code;
    std::string shed;  // shed for overload: where (RequestLogEntry::shed)
    bool degraded = false;
  };
  // Decides a scoring request and calls "scored" once with the answer: on this thread, or
  // from the thread that completes the decision (the audit log's writer once its record is
  // durable: DecisionService::ScoreThen), so that no worker waits for a sync.
  using ScoredFn = absl::AnyInvocable<void(HttpResponse, ScoreOutcome) &&>;
  void Score(const HttpRequest& request, bool batch, std::chrono::steady_clock::time_point arrival,
             std::string_view actor, ScoredFn scored);
  HttpResponse IngestPolicy(const HttpRequest& request, std::string_view actor);
  HttpResponse Activate(const HttpRequest& request);
  HttpResponse Ready() const;
  // 503 model_required (options_.model_required without a champion).
  static HttpResponse ModelRequired();
  // What of "response" a caller may see: no path of the server, no internal detail.
  void PublicBody(int route, HttpResponse& response) const;
  HttpResponse Metrics() const;
  HttpResponse Drift() const;
  // POST /v1/drift/release (admin): an operator lifts a drift freeze, saying why.
  HttpResponse DriftRelease(const HttpRequest& request, std::string_view actor);
  HttpResponse AuditVerify(const HttpRequest& request) const;
  // GET /v1/audit/export: a page of `vigil audit export` lines (docs/openapi.yaml).
  HttpResponse AuditExport(const HttpRequest& request) const;
  // "authenticated": the request passed the access check (or auth is off), which the HTTP
  // server's connection limits take into account (HttpResponse::authenticated).
  void Finish(int route, const HttpRequest& request, HttpResponse response,
              std::chrono::steady_clock::time_point start, RequestLogEntry entry,
              HttpResponder respond, bool authenticated = false);

  ServeApiOptions options_;
  WorkerPool* workers_;
  MetricsRegistry* metrics_;
  RequestLog* log_;
  std::unique_ptr<RouteMetrics> route_metrics_;
  PathRedactor redactor_;  // from options_.private_paths
  std::atomic<bool> ready_{false};
  // Scoring requests decided or being decided and not yet answered (WaitForAnswers).
  absl::Mutex answering_mu_;
  int64_t answering_ ABSL_GUARDED_BY(answering_mu_) = 0;
  ServeParts parts_;  // written once before ready_ is set
};

}  // namespace vigil

#endif  // VIGIL_SERVER_SERVE_API_H_
