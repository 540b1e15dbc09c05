#include "vigil/server/vigil_server.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "vigil/audit/audit_log.h"
#include "vigil/audit/log_tail_check.h"
#include "vigil/batching/backend_router.h"
#include "vigil/batching/batching_scorer.h"
#include "vigil/batching/circuit_breaker.h"
#include "vigil/cases/case_book.h"
#include "vigil/cluster/checkpoint_shipping.h"
#include "vigil/cluster/cluster_node.h"
#include "vigil/cluster/nats_connection.h"
#include "vigil/cluster/partition_decider.h"
#include "vigil/common/clock.h"
#include "vigil/common/status_macros.h"
#include "vigil/common/string_view.h"
#include "vigil/crypto/field_cipher.h"
#include "vigil/crypto/key_encryption_key.h"
#include "vigil/drift/drift_event_log.h"
#include "vigil/drift/drift_monitor.h"
#include "vigil/drift/drift_tap.h"
#include "vigil/drift/measured_null.h"
#include "vigil/drift/reference_profile.h"
#include "vigil/engine/account_pseudonyms.h"
#include "vigil/engine/decision_pipeline.h"
#include "vigil/engine/decision_recorder.h"
#include "vigil/engine/model_chain.h"
#include "vigil/features/feature_extractor.h"
#include "vigil/features/feature_store.h"
#include "vigil/model/cuda/cuda_scorer.h"
#include "vigil/model/model_file.h"
#include "vigil/screening/screener.h"
#include "vigil/server/cluster_scoring.h"

namespace vigil {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The roles whose models queue (a shadow is scored directly).
constexpr std::array<const char*, 2> kQueuedRoles = {"champion", "challenger"};

// Whether "host" names only this machine: localhost, 127.0.0.0/8 or ::1. Anything else
// (0.0.0.0, an interface's address, a name) may be reached from the network.
bool IsLoopbackHost(const std::string& host) {
  if (host == "localhost" || host == "::1" || host == "[::1]") return true;
  return absl::StartsWith(host, "127.") &&
         std::all_of(host.begin(), host.end(),
                     [](char ch) { return ch == '.' || absl::ascii_isdigit(ch); });
}

// Every path the configuration names, labelled by its key, for the responses to leave out.
std::vector<std::pair<std::string, std::string>> PrivatePaths(const ServeConfig& c) {
  std::vector<std::pair<std::string, std::string>> paths = {
      {c.data_dir, "<data_dir>"},
      {c.model, "<model>"},
      {c.policy, "<policy>"},
      {c.lists, "<lists>"},
      {c.fx_rates, "<fx_rates>"},
      {c.log_path, "<log>"},
      {c.drift.profile, "<drift.profile>"},
      {c.drift.measured_null, "<drift.measured_null>"},
      {c.audit.signing_key, "<audit.signing_key>"},
      {c.audit.record_kek, "<audit.record_kek>"},
      {c.tls.cert, "<tls.cert>"},
      {c.tls.key, "<tls.key>"},
      {c.tls.client_ca, "<tls.client_ca>"},
      {c.state.pseudonym_key, "<state.pseudonym_key>"}};
  if (!c.model.empty()) {
    paths.emplace_back(std::filesystem::path(c.model).parent_path().string(), "<model_dir>");
  }
  for (const std::string& list : c.screening.lists) paths.emplace_back(list, "<screening.list>");
  return paths;
}

// gpu.min_rows as written in the configuration.
std::string MinRowsText(size_t rows) {
  return rows == BackendRouterConfig::kNever ? "never" : absl::StrCat(rows);
}

// The counts of "from" added to "to" (the breaker's state is not a count: left as it is).
void AddCounts(BackendRouter::Stats& to, const BackendRouter::Stats& from) {
  to.cpu_batches += from.cpu_batches;
  to.cpu_rows += from.cpu_rows;
  to.gpu_batches += from.gpu_batches;
  to.gpu_rows += from.gpu_rows;
  to.fallback_timeout += from.fallback_timeout;
  to.fallback_error += from.fallback_error;
  to.fallback_busy += from.fallback_busy;
  to.breaker_skips += from.breaker_skips;
}

}  // namespace

struct VigilServer::Gauges {
  std::array<std::array<Gauge*, 3>, 2> queue_depth{};  // [role][class]
  std::array<Gauge*, 2> breaker_state{};               // [role]: 0 closed, 1 open, 2 half-open
  Gauge* connections = nullptr;
  Counter* connections_evicted = nullptr;
  mutable std::atomic<uint64_t> evicted_counted{0};  // HttpServer::Stats::evicted added
  Gauge* workers_busy = nullptr;
  Gauge* workers_queued = nullptr;
  Counter* breaker_openings = nullptr;
  // The audit log (read from AuditLog::stats at each scrape).
  Gauge* audit_records = nullptr;
  Gauge* audit_groups = nullptr;
  Gauge* audit_syncs = nullptr;
  Gauge* audit_bytes = nullptr;
  Gauge* audit_tree_heads = nullptr;
  Gauge* audit_refused = nullptr;
  Gauge* audit_healthy = nullptr;
};

// The backend routers' counts (gpu.enabled), summed over every router made: one per model
// loaded. A router's final counts move to `retired` when the last holder of its model lets go
// (the deleter MakeRouter gives it), so the sums never go back; each scrape adds to the
// counters what is new since the one before.
struct VigilServer::GpuMetrics {
  std::array<Counter*, 2> batches{};    // [cpu, gpu]
  std::array<Counter*, 2> rows{};       // [cpu, gpu]
  std::array<Counter*, 3> fallbacks{};  // [timeout, error, busy]
  Counter* breaker_skips = nullptr;
  std::array<Gauge*, 2> breaker_state{};  // [role], as Gauges::breaker_state
  absl::Mutex mu;  // taken before a router's own lock, never after
  std::vector<const BackendRouter*> live ABSL_GUARDED_BY(mu);
  BackendRouter::Stats retired ABSL_GUARDED_BY(mu);
  BackendRouter::Stats reported ABSL_GUARDED_BY(mu);
};

// The screener's reloads and its lists' size. The poller is the only caller of the
// screener's reloads, so it counts them as it makes them.
struct VigilServer::ScreeningMetrics {
  Counter* reloads = nullptr;
  Counter* reload_failures = nullptr;
  Gauge* entries = nullptr;
};

// The drift monitor's state as gauges, read from DriftMonitor::State at each scrape. Subjects
// and windows are fixed when the monitor is created, so the series are registered once.
struct VigilServer::CaseGauges {
  std::array<Gauge*, 5> states{};  // cases::CaseState order
  Gauge* overdue = nullptr;
  std::array<Gauge*, cases::kScoreBands> band_fp{};
  // By rule id, made as rules first appear among the cases' reasons; watchlist hits
  // ("<list>:<entry>") are left out, and at most kMaxRules rules are kept, so that the series
  // stay bounded.
  static constexpr size_t kMaxRules = 256;
  absl::Mutex mu;
  absl::flat_hash_map<std::string, Gauge*> rule_fp ABSL_GUARDED_BY(mu);
};

struct VigilServer::DriftGauges {
  struct Window {
    Gauge* severity = nullptr;
    Gauge* score = nullptr;
  };
  std::vector<std::vector<Window>> windows;  // [subject][window], in State()'s order
  std::vector<Gauge*> level;                 // [subject]
  Gauge* monitor_level = nullptr;
  Gauge* frozen = nullptr;
  Gauge* drifted_share = nullptr;
  Counter* events = nullptr;
  // Scrapes may run concurrently: the events counter advances by what was not yet reported.
  absl::Mutex mu;
  uint64_t events_reported ABSL_GUARDED_BY(mu) = 0;
};

absl::StatusOr<std::unique_ptr<VigilServer>> VigilServer::Start(ServeConfig config, FxRates fx,
                                                                ServeHooks hooks) {
  VIGIL_RETURN_IF_ERROR(config.Validate());
  std::unique_ptr<VigilServer> s(new VigilServer());
  s->config_ = std::move(config);
  s->hooks_ = std::move(hooks);
  s->fx_ = std::make_unique<FxRates>(std::move(fx));
  const ServeConfig& c = s->config_;
  RequestLogOptions log_options;
  log_options.path = c.log_path;
  log_options.sample_rate = c.log_sample_rate;
  VIGIL_ASSIGN_OR_RETURN(s->log_, RequestLog::Create(log_options));
  // Before anything binds or loads: a GPU that was asked for and is not there stops the start.
  VIGIL_RETURN_IF_ERROR(s->StartGpu());
  s->metrics_ = std::make_unique<MetricsRegistry>();
  s->workers_ = std::make_unique<WorkerPool>(
      WorkerPoolOptions{.threads = c.worker_threads,
                        .max_queue = c.worker_queue,
                        .max_queue_delay = c.worker_max_queue_delay});
  if (c.auth.mode == "tokens") {
    std::vector<std::pair<std::string, Role>> certificate_roles;
    for (const auto& [subject, role] : c.auth.certificate_roles) {
      VIGIL_ASSIGN_OR_RETURN(Role r, ParseRole(role));
      certificate_roles.emplace_back(subject, r);
    }
    VIGIL_ASSIGN_OR_RETURN(s->access_, ApiAccess::Open(c.data_dir, std::move(certificate_roles)));
    if (s->access_->token_count() == 0 && c.auth.certificate_roles.empty()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "auth.mode is tokens but ", c.data_dir,
          "/access_tokens.jsonl holds no token and no auth.certificate_roles are set, so "
          "nobody could call the API: create a token (vigil token create --data-dir ",
          c.data_dir, " --role scorer), or set auth: none (--auth none) on purpose"));
    }
  }
  ServeApiOptions api_options;
  api_options.access = s->access_.get();
  api_options.before_scrape = [srv = s.get()] { srv->RefreshGauges(); };
  api_options.score_budget = c.score_budget;
  api_options.model_required = c.model_required;
  api_options.private_paths = PrivatePaths(c);
  VIGIL_ASSIGN_OR_RETURN(s->api_, ServeApi::Create(std::move(api_options), s->workers_.get(),
                                                   s->metrics_.get(), s->log_.get()));

  HttpServerOptions http;
  http.host = c.host;
  http.port = c.port;
  http.io_threads = c.io_threads;
  http.limits = c.limits;
  if (c.tls.enabled()) {
    http.tls.enabled = true;
    http.tls.cert_file = c.tls.cert;
    http.tls.key_file = c.tls.key;
    http.tls.client_ca_file = c.tls.client_ca;
    http.tls.ciphers = c.tls.ciphers;
    http.tls.ciphersuites = c.tls.ciphersuites;
    http.tls.min_version = c.tls.min_version;
  }
  http.on_tls_failure = [api = s->api_.get()](std::string_view reason) {
    api->CountTlsFailure(reason);
  };
  http.on_refused = [api = s->api_.get()](int status, std::string_view code) {
    api->CountRefused(status, code);
  };
  // The API outlives the HTTP server (members are destroyed in reverse order).
  std::shared_ptr<HttpHandler> handler(s->api_.get(), [](HttpHandler*) {});
  VIGIL_ASSIGN_OR_RETURN(s->http_, HttpServer::Start(std::move(http), std::move(handler)));
  VIGIL_RETURN_IF_ERROR(s->Load());
  ScoringService* scoring = s->cluster_scoring_ != nullptr
                                ? static_cast<ScoringService*>(s->cluster_scoring_.get())
                                : s->service_.get();
  s->api_->SetReady({scoring,
                     s->policies_.get(),
                     s->deployment_.get(),
                     s->drift_monitor_.get(),
                     s->drift_events_.get(),
                     s->drift_tap_.get(),
                     s->service_ != nullptr ? s->service_->audit_log() : nullptr,
                     s->screener_.get(),
                     s->cases_.get(),
                     s->cases_off_,
                     {c.cases.report_entity_id, c.cases.report_entity_branch,
                      s->fx_ != nullptr ? s->fx_->reporting_currency().code() : "USD"}});
  if (s->screener_ != nullptr && c.screening.reload_interval > std::chrono::seconds(0)) {
    s->screening_poller_ = std::thread([srv = s.get()] { srv->PollScreening(); });
  }
  s->checkpointer_ = std::thread([srv = s.get()] {
    bool drift_error_logged = false;
    // A failure is logged when it starts (and when it changes), not every second: a stopped
    // audit log keeps failing until the restart, and is also reported by /readyz and metrics.
    std::string last_error;
    while (!srv->stop_background_.WaitForNotificationWithTimeout(absl::Seconds(1))) {
      const absl::Status checkpoint =
          srv->service_ != nullptr ? srv->service_->Checkpoint() : absl::OkStatus();
      const std::string error = checkpoint.ok() ? "" : std::string(checkpoint.message());
      if (!error.empty() && error != last_error) {
        srv->log_->Event("error", "feature checkpoint failed", {{"error", error}});
      } else if (error.empty() && !last_error.empty()) {
        srv->log_->Event("info", "feature checkpoints succeed again");
      }
      last_error = error;
      srv->log_->ReportShed();  // the end of a burst of sheds is told too
      if (srv->access_ != nullptr) {
        absl::StatusOr<bool> reloaded = srv->access_->ReloadIfChanged();
        if (!reloaded.ok()) {
          srv->log_->Event("error", "access tokens not reloaded; the tokens in force stay",
                           {{"error", std::string(reloaded.status().message())}});
        } else if (*reloaded) {
          srv->log_->Event("info", "access tokens reloaded",
                           {{"tokens", std::to_string(srv->access_->token_count())}});
        }
      }
      // The tap keeps the monitor's first error (an event it could not store); say it once.
      if (srv->drift_tap_ != nullptr && !drift_error_logged) {
        if (absl::Status st = srv->drift_tap_->status(); !st.ok()) {
          srv->log_->Event("error", "drift monitor failed to record an event",
                           {{"error", std::string(st.message())}});
          drift_error_logged = true;
        }
      }
    }
  });
  const auto champion = s->deployment_->Current()->champion;
  s->log_->Event("info", "vigil serve ready",
                 {{"listen", absl::StrCat(c.host, ":", s->port())},
                  {"policy", s->policies_->Active()->tag()},
                  {"policy_from", s->policy_summary_},
                  {"model", champion != nullptr ? champion->version : "none"},
                  {"model_from", s->model_summary_},
                  {"model_required", c.model_required ? "true" : "false"},
                  {"batcher", c.batcher_preset},
                  {"gpu", s->gpu_summary_},
                  {"drift", s->drift_summary_},
                  {"screening", s->screening_summary_},
                  {"transport", !c.tls.enabled()          ? "plain HTTP (plaintext: true)"
                                : c.tls.client_ca.empty() ? "TLS"
                                                          : "mutual TLS"},
                  {"auth", c.auth.mode},
                  {"cluster", c.cluster.enabled()
                                  ? absl::StrCat(c.cluster.name, " as node ", c.cluster.node_id,
                                                 " (", c.cluster.partitions, " partitions)")
                                  : std::string("off")}});
  s->WarnAboutExposure();
  return s;
}

void VigilServer::WarnAboutExposure() {
  const ServeConfig& c = config_;
  const std::string listen = absl::StrCat(c.host, ":", port());
  const bool loopback = IsLoopbackHost(c.host);
  if (!c.tls.enabled() && !loopback) {
    log_->Event("warn",
                "plain HTTP on a non-loopback address (plaintext: true): bearer tokens, payments "
                "(names, accounts, amounts), decisions and audit records cross the network "
                "unencrypted and unauthenticated; serve TLS (tls.cert, tls.key) or listen on "
                "127.0.0.1 behind a TLS-terminating proxy",
                {{"listen", listen}});
  }
  if (c.auth.mode == "none") {
    log_->Event("warn",
                loopback ? "authentication is off (auth: none): anyone who reaches the port may "
                           "score, change the policy and read the audit log"
                         : "authentication is off (auth: none) on a non-loopback address: anyone "
                           "on the network who reaches the port may score payments, change the "
                           "policy, activate models and read the audit log and drift state",
                {{"listen", listen}});
  }
  if (c.model_required && deployment_->Current()->champion == nullptr) {
    log_->Event("warn",
                "model.required is true and no model is active: not ready (GET /readyz answers "
                "503 model_required) and no payment is decided until a model is activated "
                "(POST /v1/engine/activate)");
  }
}

absl::Status VigilServer::LoadPolicies() {
  const ServeConfig& c = config_;
  VIGIL_ASSIGN_OR_RETURN(ListLibrary library, LoadListLibrary(c.lists, c.policy));
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<PolicyStore> store,
                         OpenPolicyStore(c.data_dir, std::move(library), RealClock()));
  policies_ = std::move(store);
  policy_summary_ = "the version active in the data dir";
  if (!c.policy.empty()) {
    VIGIL_ASSIGN_OR_RETURN(std::string text, ReadFile(c.policy));
    VIGIL_ASSIGN_OR_RETURN(PolicyStore::Entry entry, policies_->Add(text, c.policy, "serve"));
    // The file is the initial value, as --model is: it is activated unless someone activated
    // a policy since (POST /v1/policy/ingest, `vigil policy activate` or `rollback`), whose
    // choice a restart must not silently undo.
    constexpr std::string_view kStartActivation = "serve --policy";
    VIGIL_ASSIGN_OR_RETURN(std::vector<PolicyStore::Activation> history, policies_->History());
    const bool chosen = !history.empty() && history.back().author != kStartActivation;
    if (policies_->active_id() == entry.id) {
      policy_summary_ = chosen ? "the version active in the data dir (the --policy file's)"
                               : "--policy";
    } else if (!chosen) {
      VIGIL_RETURN_IF_ERROR(policies_->Activate(entry.id, kStartActivation));
      policy_summary_ = "--policy";
    } else {
      const PolicyStore::Activation& last = history.back();
      policy_summary_ = absl::StrCat("the version activated in the data dir by ", last.author,
                                     " (", FormatUtc(last.at), ")");
      log_->Event(
          "warn",
          "the policy file on the command line is stored but not activated: the version "
          "activated since stays",
          {{"file", c.policy},
           {"file_version", absl::StrCat(entry.version, "@", entry.sha256.substr(0, 12))},
           {"file_id", absl::StrCat(entry.id)},
           {"active", policies_->Active() != nullptr ? policies_->Active()->tag() : "none"},
           {"activated_by", last.author},
           {"activated_at", FormatUtc(last.at)},
           {"to_use_the_file",
            absl::StrCat("vigil policy activate ", entry.id, " --data-dir ", c.data_dir,
                         " (server stopped), or POST /v1/policy/ingest with the file")}});
    }
  }
  if (policies_->Active() == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "no active policy in ", c.data_dir, "/policies: give --policy FILE (or policy: in the "
        "configuration)"));
  }
  return absl::OkStatus();
}

absl::Status VigilServer::RegisterServerMetrics() {
  gauges_ = std::make_unique<Gauges>();
  Gauges& g = *gauges_;
  for (size_t r = 0; r < kQueuedRoles.size(); ++r) {
    for (int cls = 0; cls < 3; ++cls) {
      VIGIL_ASSIGN_OR_RETURN(
          g.queue_depth[r][cls],
          metrics_->AddGauge("vigil_batcher_queue_depth",
                             "Requests waiting in the dynamic batcher, by model role and class.",
                             {{"role", kQueuedRoles[r]},
                              {"class", std::string(PriorityName(static_cast<Priority>(cls)))}}));
    }
    VIGIL_ASSIGN_OR_RETURN(
        g.breaker_state[r],
        metrics_->AddGauge("vigil_breaker_state",
                           "The model's circuit breaker: 0 closed, 1 open (rules only), 2 "
                           "half-open (probing); -1 when no model holds the role.",
                           {{"role", kQueuedRoles[r]}}));
  }
  VIGIL_ASSIGN_OR_RETURN(g.breaker_openings,
                         metrics_->AddCounter("vigil_breaker_openings_total",
                                              "Times a model's circuit breaker opened."));
  VIGIL_ASSIGN_OR_RETURN(g.connections, metrics_->AddGauge("vigil_http_connections",
                                                           "Open HTTP connections."));
  VIGIL_ASSIGN_OR_RETURN(
      g.connections_evicted,
      metrics_->AddCounter("vigil_http_connections_evicted_total",
                           "Unauthenticated connections closed to make room for a new one "
                           "(limits.max_unauthenticated_share)."));
  VIGIL_ASSIGN_OR_RETURN(g.workers_busy,
                         metrics_->AddGauge("vigil_workers_busy", "Requests being handled now."));
  VIGIL_ASSIGN_OR_RETURN(g.audit_records,
                         metrics_->AddGauge("vigil_audit_records",
                                            "Decisions durably recorded in the audit log (its size)."));
  VIGIL_ASSIGN_OR_RETURN(g.audit_groups,
                         metrics_->AddGauge("vigil_audit_groups",
                                            "Group commits (atomic batches) since the start."));
  VIGIL_ASSIGN_OR_RETURN(g.audit_syncs,
                         metrics_->AddGauge("vigil_audit_syncs",
                                            "Syncs of the audit log's writes since the start (one "
                                            "covers the groups written since the one before)."));
  VIGIL_ASSIGN_OR_RETURN(g.audit_bytes,
                         metrics_->AddGauge("vigil_audit_bytes_written",
                                            "Bytes the audit log's groups wrote since the start: "
                                            "record chunks, tree tiles, heads, index, and the "
                                            "feature state carried with them."));
  VIGIL_ASSIGN_OR_RETURN(g.audit_tree_heads,
                         metrics_->AddGauge("vigil_audit_tree_heads",
                                            "Tree heads signed since the start."));
  VIGIL_ASSIGN_OR_RETURN(g.audit_refused,
                         metrics_->AddGauge("vigil_audit_refused_records",
                                            "Records refused since the start (queue full or the "
                                            "log stopped): their decisions were answered 503."));
  VIGIL_ASSIGN_OR_RETURN(g.audit_healthy,
                         metrics_->AddGauge("vigil_audit_healthy",
                                            "1 while the audit log accepts records; 0 after a "
                                            "failed write (the server is then unready)."));
  VIGIL_ASSIGN_OR_RETURN(g.workers_queued,
                         metrics_->AddGauge("vigil_workers_queued",
                                            "Requests waiting for a worker (bounded by "
                                            "workers.queue; beyond it, 503)."));
  std::vector<double> batch_bounds = {1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024};
  VIGIL_ASSIGN_OR_RETURN(batch_sizes_,
                         metrics_->AddValueHistogram("vigil_batch_size",
                                                     "Rows per batch the model scored.", {},
                                                     batch_bounds));
  return RegisterGpuMetrics();
}

absl::Status VigilServer::DeployModels(std::shared_ptr<const PolicySource> policy_source) {
  const ServeConfig& c = config_;
  const PolicyInputLayout layout(FeatureExtractor::Schema());
  DecisionOptions decision_options;
  decision_options.screening_min_score = c.screening.min_score;
  // Filled by the case book once it opens (StartCases), consulted by every decision.
  decision_options.clearances = clearances_;
  // The production scorer chain (model_chain.h), with this server's metrics, log and hooks.
  ModelChainOptions chain = ModelChainOptions::For(c, PipelineMode::kServe);
  chain.hooks.wrap_model = hooks_.wrap_model;
  chain.hooks.batch_sizes = batch_sizes_;
  chain.hooks.adopt_router = [this](std::unique_ptr<BackendRouter> router) {
    return AdoptRouter(std::move(router));
  };
  chain.hooks.on_breaker_change = [this](const std::string& version, CircuitBreaker::State from,
                                         CircuitBreaker::State to) {
    if (to == CircuitBreaker::State::kOpen && from != to) gauges_->breaker_openings->Increment();
    log_->Event(to == CircuitBreaker::State::kOpen ? "warn" : "info",
                "model circuit breaker changed state",
                {{"model", version},
                 {"from", std::string(CircuitBreaker::StateName(from))},
                 {"to", std::string(CircuitBreaker::StateName(to))}});
  };
  auto loader = [policy_source, layout, decision_options, chain, screener = screener_](
                    const ModelRegistry::Entry& entry)
      -> absl::StatusOr<std::shared_ptr<const ModelDeployment::Model>> {
    VIGIL_ASSIGN_OR_RETURN(std::shared_ptr<const TreeEnsemble> ensemble, LoadModelFile(entry.path));
    VIGIL_ASSIGN_OR_RETURN(std::shared_ptr<ModelDeployment::Model> model,
                           BuildModelChain(std::move(ensemble), entry.ref, chain));
    VIGIL_ASSIGN_OR_RETURN(
        std::unique_ptr<DecisionMaker> decider,
        DecisionMaker::Create(policy_source, model->batcher, layout, decision_options, screener));
    model->decider = std::move(decider);
    return std::shared_ptr<const ModelDeployment::Model>(std::move(model));
  };
  VIGIL_ASSIGN_OR_RETURN(
      std::unique_ptr<DecisionMaker> rules,
      DecisionMaker::Create(policy_source, nullptr, layout, decision_options, screener_));
  VIGIL_ASSIGN_OR_RETURN(ModelRegistry registry,
                         ModelRegistry::Open(absl::StrCat(c.data_dir, "/models")));
  std::string initial = c.model_ref;
  if (!c.model.empty()) {
    VIGIL_ASSIGN_OR_RETURN(ModelRegistry::Entry added, registry.Add(c.model));
    initial = added.ref;
  }
  const std::string record_path = absl::StrCat(registry.dir(), "/", kDeploymentRecordFile);
  deployment_ = std::make_unique<ModelDeployment>(std::move(registry), loader, std::move(rules),
                                                  record_path);
  VIGIL_RETURN_IF_ERROR(DeployAtStart(initial, record_path));

  return absl::OkStatus();
}

absl::StatusOr<VigilServer::OpenedState> VigilServer::OpenService() {
  const ServeConfig& c = config_;
  // The drift events share the feature store's RocksDB (one more column family), so a data dir
  // stays one store to back up and the events outlive restarts.
  const std::string drift_profile = c.DriftProfilePath();
  // The audit log shares it too: its groups carry the feature state, atomically.
  std::vector<std::string> families = audit::AuditColumnFamilies();
  families.push_back(DecisionService::kPendingRowsFamily);
  families.push_back(cases::kCasesFamily);
  if (!drift_profile.empty()) families.push_back(drift::DriftEventLog::kColumnFamily);
  // Accounts are known by keyed hashes in the state (docs/security.md).
  FeatureConfig feature_config;
  VIGIL_ASSIGN_OR_RETURN(feature_config.account_pseudonyms,
                         LoadAccountPseudonyms(c.state.pseudonym_key, c.data_dir,
                                               c.state.pseudonym_hash));
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<FeatureStore> features,
                         FeatureStore::Open(c.data_dir, *fx_, feature_config, families,
                                            hooks_.store_faults));
  // Owned by the feature store, which the service owns (see the members' order).
  KvStore* const kv = &features->kv();
  // A data dir whose feature state already holds accounts is warm: no drift warm-up.
  const bool warm_state = features->extractor().num_accounts() > 0;
  DecisionServiceOptions options;
  options.idempotency_capacity = c.idempotency_capacity;
  options.score_budget = c.score_budget;
  options.max_batch = c.limits.batch_size;
  options.max_future_skew = c.max_future_skew;
  // The deployment is owned here; the service holds it without owning it.
  std::shared_ptr<const ModelDeployment> deployment(deployment_.get(),
                                                    [](const ModelDeployment*) {});
  service_ = std::make_unique<DecisionService>(std::move(features), options, std::move(deployment),
                                               RealClock());
  if (const EventTimeRepair& r = service_->event_time_repair(); r.repaired()) {
    // A state from before event times were bounded at admission (or a clock set back).
    log_->Event("warn",
                "feature state held events dated past the server's clock; they are forgotten "
                "so that real payments are not refused as too late",
                {{"watermark_before", FormatUtc(FromUnixMicros(r.watermark_before_us))},
                 {"watermark_after", r.watermark_after_us == INT64_MIN
                                         ? std::string("none")
                                         : FormatUtc(FromUnixMicros(r.watermark_after_us))},
                 {"accounts", absl::StrCat(r.accounts)},
                 {"events_forgotten", absl::StrCat(r.events_dropped)},
                 {"max_future_skew_seconds", absl::StrCat(c.max_future_skew.count())}});
  }
  return OpenedState{.kv = kv, .drift_profile = drift_profile, .warm = warm_state};
}

absl::Status VigilServer::Load() {
  VIGIL_RETURN_IF_ERROR(LoadPolicies());
  // Shared with the decision makers, which hold it for their lifetime.
  std::shared_ptr<const PolicySource> policy_source(policies_.get(), [](const PolicySource*) {});
  VIGIL_RETURN_IF_ERROR(StartScreening());
  VIGIL_RETURN_IF_ERROR(RegisterServerMetrics());
  VIGIL_RETURN_IF_ERROR(DeployModels(std::move(policy_source)));
  if (config_.cluster.enabled()) {
    cases_off_ = "a node of a cluster keeps no decision log of its own (docs/cluster.md)";
    return StartCluster();
  }
  VIGIL_ASSIGN_OR_RETURN(const OpenedState state, OpenService());
  VIGIL_RETURN_IF_ERROR(StartAudit(state.kv));
  VIGIL_RETURN_IF_ERROR(StartCases(state.kv));
  VIGIL_RETURN_IF_ERROR(StartDrift(state.drift_profile, state.kv, state.warm));
  VIGIL_RETURN_IF_ERROR(service_->RegisterMetrics(*metrics_));
  return RegisterDriftGauges();
}

absl::Status VigilServer::DeployAtStart(const std::string& initial,
                                        const std::string& record_path) {
  const ServeConfig& c = config_;
  const char* flag = !c.model.empty() ? "--model" : "--model-ref";
  VIGIL_ASSIGN_OR_RETURN(std::optional<DeploymentRecord> record,
                         ReadDeploymentRecord(record_path));
  if (!record.has_value()) {
    if (initial.empty()) {
      model_summary_ = "none: rules only (no --model, --model-ref or stored activation)";
      return absl::OkStatus();
    }
    VIGIL_RETURN_IF_ERROR(deployment_->SetChampion(initial));
    model_summary_ = absl::StrCat(flag, " (no activation stored yet)");
    return absl::OkStatus();
  }
  // An operator's activation outlives restarts: the command line's model is where a fresh
  // data dir starts, not an override (docs/serve.md, "Which model decides").
  VIGIL_RETURN_IF_ERROR(deployment_->Restore(*record));
  model_summary_ = absl::StrCat("the activation stored in the data dir (", record->activated_at,
                                ")");
  const std::shared_ptr<const ModelDeployment::Snapshot> now = deployment_->Current();
  const std::array<std::shared_ptr<const ModelDeployment::Model>, 3> slots = {
      now->champion, now->challenger, now->shadow};
  const bool deployed = std::any_of(slots.begin(), slots.end(), [&](const auto& m) {
    return m != nullptr && m->ref == initial;
  });
  if (!initial.empty() && (now->champion == nullptr || now->champion->ref != initial)) {
    log_->Event("warn",
                "the model on the command line is not the champion: the stored activation wins",
                {{"command_line_model", absl::StrCat("model@", initial.substr(0, 12))},
                 {"flag", flag},
                 {"deployed_as", deployed ? "challenger or shadow" : "not deployed"},
                 {"champion", now->champion != nullptr ? now->champion->version : "none"},
                 {"activated_at", record->activated_at},
                 {"record", record_path},
                 {"to_serve_it", "POST /v1/engine/activate {\"model_ref\": \"" +
                                     initial.substr(0, 12) + "\", \"traffic_weight\": 1}"}});
  }
  return absl::OkStatus();
}

absl::Status VigilServer::StartGpu() {
  const GpuSection& g = config_.gpu;
  if (!g.enabled) return absl::OkStatus();  // "off": not a single CUDA call
  // A build without the CUDA backend answers that it lacks it (naming VIGIL_ENABLE_CUDA); a
  // host without a driver or device, the CUDA runtime's reason.
  absl::StatusOr<CudaDeviceInfo> device = ProbeCudaDevice(g.device);
  if (!device.ok()) {
    if (absl::IsInvalidArgument(device.status())) {  // no such ordinal
      return absl::InvalidArgumentError(absl::StrCat(
          "gpu.device: the CUDA backend cannot start on device ", g.device, ": ",
          device.status().message()));
    }
    return absl::Status(device.status().code(),
                        absl::StrCat("gpu.enabled: the CUDA backend cannot start: ",
                                     device.status().message()));
  }
  const std::string min_rows =
      absl::StrCat("P0 ", MinRowsText(g.min_rows[0]), ", P1 ", MinRowsText(g.min_rows[1]),
                   ", P2 ", MinRowsText(g.min_rows[2]));
  gpu_summary_ = absl::StrCat("on: device ", device->ordinal, " (", device->name,
                              "), min_rows ", min_rows, ", timeout ", g.timeout.count(), " us");
  log_->Event("info", "gpu backend on",
              {{"device", absl::StrCat(device->ordinal)},
               {"name", device->name},
               {"compute_capability",
                absl::StrCat(device->compute_major, ".", device->compute_minor)},
               {"memory_bytes", absl::StrCat(device->memory_bytes)},
               {"driver_version", absl::StrCat(device->driver_version)},
               {"runtime_version", absl::StrCat(device->runtime_version)},
               {"min_rows", min_rows},
               {"timeout_us", absl::StrCat(g.timeout.count())}});
  return absl::OkStatus();
}

std::shared_ptr<const BackendRouter> VigilServer::AdoptRouter(
    std::unique_ptr<BackendRouter> router) {
  const std::shared_ptr<GpuMetrics> m = gpu_metrics_;
  {
    absl::MutexLock lock(&m->mu);
    m->live.push_back(router.get());
  }
  // Dropped with the last model snapshot that holds it (maybe after the server): its counts
  // stay in the sums, and its CudaScorer frees the device memory it held.
  return std::shared_ptr<const BackendRouter>(router.release(), [m](const BackendRouter* r) {
    {
      absl::MutexLock lock(&m->mu);
      const auto it = std::find(m->live.begin(), m->live.end(), r);
      if (it != m->live.end()) {
        m->live.erase(it);
        AddCounts(m->retired, r->stats());
      }
    }
    delete r;
  });
}

absl::Status VigilServer::RegisterGpuMetrics() {
  if (!config_.gpu.enabled) return absl::OkStatus();
  auto m = std::make_shared<GpuMetrics>();
  constexpr std::array<const char*, 2> kBackends = {"cpu", "gpu"};
  for (size_t b = 0; b < kBackends.size(); ++b) {
    VIGIL_ASSIGN_OR_RETURN(
        m->batches[b],
        metrics_->AddCounter("vigil_model_batches_total",
                             "Batches the model scored, by backend (cpu counts the GPU batches "
                             "that fell back to the CPU too).",
                             {{"backend", kBackends[b]}}));
    VIGIL_ASSIGN_OR_RETURN(
        m->rows[b], metrics_->AddCounter("vigil_model_rows_total",
                                         "Rows the model scored, by backend (as "
                                         "vigil_model_batches_total).",
                                         {{"backend", kBackends[b]}}));
  }
  constexpr std::array<const char*, 3> kCauses = {"timeout", "error", "busy"};
  for (size_t c = 0; c < kCauses.size(); ++c) {
    VIGIL_ASSIGN_OR_RETURN(
        m->fallbacks[c],
        metrics_->AddCounter("vigil_gpu_fallbacks_total",
                             "GPU batches scored on the CPU instead (model_backend cpu-fallback), "
                             "by cause: late (gpu.timeout_ms or the deadline), a device error, "
                             "or every GPU buffer busy.",
                             {{"cause", kCauses[c]}}));
  }
  VIGIL_ASSIGN_OR_RETURN(m->breaker_skips,
                         metrics_->AddCounter("vigil_gpu_breaker_skips_total",
                                              "Batches of GPU size kept on the CPU while the "
                                              "GPU's circuit breaker was open."));
  for (size_t r = 0; r < kQueuedRoles.size(); ++r) {
    VIGIL_ASSIGN_OR_RETURN(
        m->breaker_state[r],
        metrics_->AddGauge("vigil_gpu_breaker_state",
                           "The GPU's circuit breaker in the model's backend router: 0 closed, "
                           "1 open (CPU only), 2 half-open (probing); -1 when no model holds the "
                           "role.",
                           {{"role", kQueuedRoles[r]}}));
  }
  gpu_metrics_ = std::move(m);
  return absl::OkStatus();
}

void VigilServer::RefreshGpuMetrics() {
  if (gpu_metrics_ == nullptr) return;
  GpuMetrics& m = *gpu_metrics_;
  absl::MutexLock lock(&m.mu);
  BackendRouter::Stats total = m.retired;
  for (const BackendRouter* r : m.live) AddCounts(total, r->stats());
  BackendRouter::Stats& seen = m.reported;
  const auto advance = [](Counter* counter, uint64_t now, uint64_t& before) {
    if (now > before) counter->Increment(now - before);
    before = std::max(before, now);
  };
  advance(m.batches[0], total.cpu_batches, seen.cpu_batches);
  advance(m.batches[1], total.gpu_batches, seen.gpu_batches);
  advance(m.rows[0], total.cpu_rows, seen.cpu_rows);
  advance(m.rows[1], total.gpu_rows, seen.gpu_rows);
  advance(m.fallbacks[0], total.fallback_timeout, seen.fallback_timeout);
  advance(m.fallbacks[1], total.fallback_error, seen.fallback_error);
  advance(m.fallbacks[2], total.fallback_busy, seen.fallback_busy);
  advance(m.breaker_skips, total.breaker_skips, seen.breaker_skips);
}

absl::Status VigilServer::StartAudit(KvStore* kv) {
  const AuditSection& a = config_.audit;
  const std::string key_path =
      a.signing_key.empty() ? DefaultSigningKeyPath(config_.data_dir) : a.signing_key;
  bool created = false;
  absl::StatusOr<std::shared_ptr<const audit::LogSigner>> signer =
      DataDirSigningKey(a.signing_key, config_.data_dir, &created);
  if (!signer.ok()) {
    return absl::Status(signer.status().code(),
                        absl::StrCat("audit.signing_key: ", signer.status().message()));
  }
  audit::AuditLogOptions options;
  VIGIL_ASSIGN_OR_RETURN(options.hash, audit::ParseHashAlgorithm(a.hash));
  options.signer = *signer;
  options.tree_head_every_records = a.tree_head_every;
  options.tree_head_interval = a.tree_head_interval;
  options.group_max_records = a.group_max_records;
  options.group_max_delay = a.group_max_delay;
  options.max_queued_records = a.queue;
  options.compress_records = a.compress_records;
  // The server holds only the public half of the key-encryption key: it seals what it records
  // and can open none of it (docs/security.md, "Personal data at rest").
  if (!a.record_kek.empty()) {
    absl::StatusOr<crypto::KeyEncryptionKey> kek =
        crypto::KeyEncryptionKey::LoadPublicKeyFile(a.record_kek);
    if (!kek.ok()) {
      return absl::Status(kek.status().code(),
                          absl::StrCat("audit.record_kek: ", kek.status().message()));
    }
    options.record_kek = std::make_shared<const crypto::KeyEncryptionKey>(*std::move(kek));
    VIGIL_ASSIGN_OR_RETURN(options.record_suite, crypto::ParseCipherSuite(a.record_cipher));
    options.records_per_data_key = a.records_per_data_key;
  }
  const std::string kek_id = options.record_kek != nullptr ? options.record_kek->key_id() : "";
  // Never continue (and sign over) a log whose newest part was tampered with.
  VIGIL_RETURN_IF_ERROR(audit::CheckAuditLogAtStart(kv, *options.signer, config_.data_dir));
  VIGIL_ASSIGN_OR_RETURN(std::unique_ptr<audit::AuditLog> log,
                         audit::AuditLog::Open(kv, std::move(options), RealClock()));
  const audit::AuditLog* raw = log.get();
  VIGIL_RETURN_IF_ERROR(service_->AttachAudit(
      std::move(log), a.durable_ack, a.max_waiting,
      a.max_wait.count() > 0 ? std::chrono::microseconds(a.max_wait)
                             : std::chrono::microseconds::max()));
  log_->Event("info", "audit log open",
              {{"records", absl::StrCat(raw->size())},
               {"log_id", raw->header().log_id},
               {"hash", std::string(audit::HashAlgorithmName(raw->hash()))},
               {"key_id", raw->header().key_id},
               {"signing_key", key_path},
               {"key_created", created ? "true" : "false"},
               {"durable_ack", a.durable_ack ? "true" : "false"},
               {"sealed_fields", kek_id.empty() ? "off" : a.record_cipher},
               {"record_kek_id", kek_id}});
  return absl::OkStatus();
}

absl::Status VigilServer::StartCases(KvStore* kv) {
  if (!config_.cases.enabled) {
    cases_off_ = "cases.enabled is false";
    log_->Event("info", "cases off", {{"reason", cases_off_}});
    return absl::OkStatus();
  }
  if (service_->audit_log()->sealer() != nullptr) {
    cases_off_ = "the decision log seals personal fields (audit.record_kek), which cases read";
    log_->Event("info", "cases off", {{"reason", cases_off_}});
    return absl::OkStatus();
  }
  const ServeCasesConfig& k = config_.cases;
  cases::CaseBookOptions options;
  options.fx = fx_.get();
  options.policy.window = k.window;
  options.policy.sla = k.sla;
  options.policy.four_eyes_block = k.four_eyes_block;
  options.policy.four_eyes_suspicious = k.four_eyes_suspicious;
  options.clearances = clearances_;
  options.max_attachment_bytes = k.attachment_bytes;
  // A rule's severity from the policy in force when its alert is read (the priority's
  // typology part): a rule the policy no longer has counts 0.
  options.rule_severity = [store = policies_.get()](std::string_view id) -> int {
    const std::shared_ptr<const Policy> policy = store != nullptr ? store->Active() : nullptr;
    if (policy == nullptr) return 0;
    for (const PolicyRule& rule : policy->rules()) {
      if (rule.id == id) return rule.severity;
    }
    return 0;
  };
  VIGIL_ASSIGN_OR_RETURN(
      cases_, cases::CaseBook::Open(kv, service_->audit_log(), std::move(options), RealClock()));
  VIGIL_RETURN_IF_ERROR(RegisterCaseGauges());
  const cases::CaseBookStats stats = cases_->stats();
  log_->Event("info", "cases open",
              {{"cases", absl::StrCat(stats.cases)},
               {"open", absl::StrCat(stats.open)},
               {"applied", absl::StrCat(stats.applied)}});
  return absl::OkStatus();
}

absl::Status VigilServer::RegisterCaseGauges() {
  auto g = std::make_unique<CaseGauges>();
  for (size_t i = 0; i < g->states.size(); ++i) {
    VIGIL_ASSIGN_OR_RETURN(
        g->states[i],
        metrics_->AddGauge(
            "vigil_cases", "Cases by state (docs/cases.md), at scrape time.",
            {{"state", std::string(cases::CaseStateName(static_cast<cases::CaseState>(i)))}}));
  }
  VIGIL_ASSIGN_OR_RETURN(g->overdue,
                         metrics_->AddGauge("vigil_cases_overdue",
                                            "Unclosed cases past their SLA (cases.sla_hours)."));
  for (size_t b = 0; b < cases::kScoreBands; ++b) {
    VIGIL_ASSIGN_OR_RETURN(
        g->band_fp[b],
        metrics_->AddGauge("vigil_case_false_positive_rate_by_band",
                           "False positives over the closed cases whose highest model score is "
                           "in the band (rules_only: no model scored); NaN while none is closed.",
                           {{"band", cases::ScoreBandName(b)}}));
  }
  case_gauges_ = std::move(g);
  return absl::OkStatus();
}

void VigilServer::RefreshCaseGauges() {
  if (case_gauges_ == nullptr || cases_ == nullptr) return;
  CaseGauges& g = *case_gauges_;
  const cases::CaseTallyReport r = cases_->Tally();
  for (size_t i = 0; i < g.states.size(); ++i) g.states[i]->Set(static_cast<double>(r.states[i]));
  g.overdue->Set(static_cast<double>(r.overdue));
  for (size_t b = 0; b < cases::kScoreBands; ++b) {
    g.band_fp[b]->Set(r.bands[b].false_positive_rate());
  }
  absl::MutexLock lock(&g.mu);
  for (const cases::ReasonTally& t : r.reasons) {
    if (t.reason.find(':') != std::string::npos) continue;  // a watchlist hit
    auto it = g.rule_fp.find(t.reason);
    if (it == g.rule_fp.end()) {
      if (g.rule_fp.size() >= CaseGauges::kMaxRules) continue;
      absl::StatusOr<Gauge*> gauge = metrics_->AddGauge(
          "vigil_case_false_positive_rate_by_rule",
          "False positives over the closed cases that hold the rule; NaN while none is closed.",
          {{"rule", t.reason}});
      if (!gauge.ok()) continue;
      it = g.rule_fp.emplace(t.reason, *gauge).first;
    }
    it->second->Set(t.false_positive_rate());
  }
}

absl::Status VigilServer::StartScreening() {
  const ScreeningSection& sc = config_.screening;
  if (sc.lists.empty()) {
    screening_summary_ = "off: no screening.lists";
    log_->Event("info", "screening off", {{"reason", screening_summary_}});
    return absl::OkStatus();
  }
  screening::ScreenerConfig screener_config;
  screener_config.sources = sc.lists;
  // The screener's errors name the list ("screening list '<path>': ...").
  VIGIL_ASSIGN_OR_RETURN(screener_, screening::Screener::Create(std::move(screener_config)));
  auto m = std::make_unique<ScreeningMetrics>();
  VIGIL_ASSIGN_OR_RETURN(m->reloads,
                         metrics_->AddCounter("vigil_screening_reloads_total",
                                              "Times changed watchlists were read and swapped in "
                                              "(screening.reload_seconds)."));
  VIGIL_ASSIGN_OR_RETURN(m->reload_failures,
                         metrics_->AddCounter("vigil_screening_reload_failures_total",
                                              "Times changed watchlists could not be read; the "
                                              "lists in force stayed."));
  VIGIL_ASSIGN_OR_RETURN(m->entries, metrics_->AddGauge("vigil_screening_list_entries",
                                                        "Entries across the watchlists in force."));
  const std::shared_ptr<const screening::ScreeningLists> lists = screener_->Current();
  m->entries->Set(static_cast<double>(lists->entry_count()));
  screening_metrics_ = std::move(m);
  const std::string versions = absl::StrJoin(lists->versions(), ", ");
  const std::string reload = sc.reload_interval > std::chrono::seconds(0)
                                 ? absl::StrCat("checked every ", sc.reload_interval.count(), " s")
                                 : "not reloaded";
  screening_summary_ =
      absl::StrCat("on: ", versions, " (", lists->entry_count(), " entries, ", reload, ")");
  log_->Event("info", "screening on",
              {{"lists", versions},
               {"entries", absl::StrCat(lists->entry_count())},
               {"reload_seconds", absl::StrCat(sc.reload_interval.count())},
               {"min_score", absl::StrCat(sc.min_score)}});
  return absl::OkStatus();
}

void VigilServer::PollScreening() {
  const absl::Duration every = absl::Seconds(config_.screening.reload_interval.count());
  ScreeningMetrics& m = *screening_metrics_;
  while (!stop_background_.WaitForNotificationWithTimeout(every)) {
    // Only files whose size or modification time changed are read again.
    const absl::StatusOr<bool> changed = screener_->ReloadIfChanged();
    const std::shared_ptr<const screening::ScreeningLists> lists = screener_->Current();
    const std::string versions = absl::StrJoin(lists->versions(), ", ");
    if (!changed.ok()) {
      // Degraded, not down: decisions go on against the lists in force. A broken file is
      // retried when it changes again, so this is said once per bad version of the file.
      m.reload_failures->Increment();
      log_->Event("warn", "screening lists not reloaded; the lists in force stay",
                  {{"error", std::string(changed.status().message())}, {"lists", versions}});
    } else if (*changed) {
      m.reloads->Increment();
      m.entries->Set(static_cast<double>(lists->entry_count()));
      log_->Event("info", "screening lists reloaded",
                  {{"lists", versions}, {"entries", absl::StrCat(lists->entry_count())}});
    }
  }
}

absl::Status VigilServer::StartDrift(const std::string& profile_path, KvStore* kv,
                                     bool warm_state) {
  const ServeConfig& c = config_;
  if (profile_path.empty()) {
    drift_summary_ = absl::StrCat("off: no reference profile (set drift.profile, or put ",
                                  kProfileBesideModel, " beside the model file)");
    log_->Event("info", "drift monitor off", {{"reason", drift_summary_}});
    return absl::OkStatus();
  }
  const auto named = [](const char* key, const std::string& path, const absl::Status& s) {
    return absl::Status(s.code(), absl::StrCat(key, " ", path, ": ", s.message()));
  };
  absl::StatusOr<drift::ReferenceProfile> profile = drift::ReferenceProfile::Load(profile_path);
  if (!profile.ok()) return named("drift.profile", profile_path, profile.status());
  drift_profile_ = std::make_unique<drift::ReferenceProfile>(*std::move(profile));
  drift::DriftConfig monitor_config = c.drift.monitor;
  const std::string null_path = c.DriftNullPath(profile_path);
  if (!null_path.empty()) {
    absl::StatusOr<drift::MeasuredNull> null = drift::MeasuredNull::Load(null_path);
    if (!null.ok()) return named("drift.measured_null", null_path, null.status());
    monitor_config.measured_null = std::make_shared<const drift::MeasuredNull>(*std::move(null));
  }
  VIGIL_ASSIGN_OR_RETURN(drift_events_, drift::DriftEventLog::Open(kv, RealClock()));
  const bool has_champion = deployment_->Current()->champion != nullptr;
  // Without a model at start there is no score to watch (and no reference for a champion
  // activated later, whose own profile would be needed): watch the features only.
  if (!has_champion) monitor_config.monitor_score = false;
  // Restored accounts have their history: the warm-up is for a fresh feature state only.
  if (warm_state && !monitor_config.warm_since.has_value()) monitor_config.warm_since = UtcTime{};
  const std::shared_ptr<const FeatureSchema> schema = FeatureExtractor::Schema();
  absl::StatusOr<std::unique_ptr<drift::DriftMonitor>> monitor = drift::DriftMonitor::Create(
      *drift_profile_, schema->version(), schema->names(), monitor_config, drift_events_.get());
  if (!monitor.ok()) {
    // A measured null of other windows is the likely mismatch; else the profile is at fault.
    const bool null_at_fault = absl::StrContains(monitor.status().message(), "measured null");
    return null_at_fault ? named("drift.measured_null", null_path, monitor.status())
                         : named("drift.profile", profile_path, monitor.status());
  }
  drift_monitor_ = *std::move(monitor);
  VIGIL_RETURN_IF_ERROR(ListenToDrift());
  drift_tap_ = std::make_unique<drift::DriftTap>(drift_monitor_.get(), c.drift.queue_rows,
                                                 drift::DriftTap::WhenFull::kDrop);
  service_->AttachDrift(drift_monitor_.get(), drift_tap_.get());
  const drift::DriftState state = drift_monitor_->State(/*exact=*/false);
  drift_summary_ = absl::StrCat("on: ", profile_path, ", ", state.subjects.size(), " subjects, ",
                                state.unmonitored.size(), " features unmonitored, freeze ",
                                monitor_config.freeze_on_l3 ? "on" : "off");
  log_->Event("info", "drift monitor on",
              {{"profile", profile_path},
               {"subjects", absl::StrCat(state.subjects.size())},
               {"unmonitored", absl::StrCat(state.unmonitored.size())},
               {"score", monitor_config.monitor_score ? "watched" : "not watched (no model)"},
               {"calibration", state.calibration},
               {"measured_null", null_path},
               {"freeze", monitor_config.freeze_on_l3 ? "on" : "off"},
               {"events_stored", absl::StrCat(drift_events_->last_id())}});
  return absl::OkStatus();
}

absl::Status VigilServer::ListenToDrift() {
  // Every level change, freeze and release: a WARN line with the subject and its evidence (the
  // event itself is in the drift_events store, numbered), and a count by kind.
  auto counters = std::make_shared<std::map<std::string, Counter*>>();
  for (const std::string_view kind : {drift::kLevelChange, drift::kRetrainRequested,
                                      drift::kCritical, drift::kFreeze, drift::kTicketOpened,
                                      drift::kFreezeReleased}) {
    VIGIL_ASSIGN_OR_RETURN(
        (*counters)[std::string(kind)],
        metrics_->AddCounter("vigil_drift_transitions_total",
                             "Drift events by kind: level changes (of a subject or the "
                             "monitor), retrain requests, escalations, freezes, review tickets "
                             "and releases (by the monitor or an operator).",
                             {{"kind", std::string(kind)}}));
  }
  // And a record in the audit log (an event record: docs/audit.md "Events"), so that what
  // the monitor changed is as tamper-evident as the decisions it changed.
  DecisionRecorder* trail = service_->decision_recorder();
  drift_monitor_->SetListener([log = log_.get(), counters, trail](const drift::DriftEvent& e) {
    const auto it = counters->find(e.kind);
    if (it != counters->end()) it->second->Increment();
    if (trail != nullptr) {
      if (absl::Status s = trail->RecordEvent("drift", drift::DriftEventToJson(e), e.recorded_at);
          !s.ok()) {
        log->Event("error", "a drift event could not be recorded in the audit log",
                   {{"kind", e.kind}, {"id", absl::StrCat(e.id)}, {"error", std::string(s.message())}});
      }
    }
    const std::string_view message =
        e.kind == drift::kFreeze            ? "drift froze the model: decisions are rules-only"
        : e.kind == drift::kFreezeReleased  ? "drift freeze released: the model decides again"
        : e.kind == drift::kRetrainRequested ? "drift requests a retrain"
        : e.kind == drift::kTicketOpened    ? "drift opened a review ticket"
        : e.kind == drift::kCritical        ? "drift escalated"
                                            : "drift level changed";
    log->Event("warn", message,
               {{"kind", e.kind},
                {"id", absl::StrCat(e.id)},
                {"subject", e.subject},
                {"window", e.window},
                {"from", std::string(drift::DriftLevelName(e.from))},
                {"to", std::string(drift::DriftLevelName(e.to))},
                {"severity", absl::StrCat(e.severity)},
                {"score", absl::StrCat(e.score)},
                {"event_time", FormatUtc(e.time)},
                {"evidence", e.detail}});
  });
  return absl::OkStatus();
}

absl::Status VigilServer::RegisterDriftGauges() {
  if (drift_monitor_ == nullptr) return absl::OkStatus();
  auto g = std::make_unique<DriftGauges>();
  const drift::DriftState state = drift_monitor_->State(/*exact=*/false);
  for (const drift::DriftSubjectState& subject : state.subjects) {
    std::vector<DriftGauges::Window> windows;
    for (const drift::DriftWindowState& w : subject.windows) {
      const MetricLabels labels = {{"subject", subject.name}, {"window", w.window}};
      DriftGauges::Window gauges;
      VIGIL_ASSIGN_OR_RETURN(
          gauges.severity,
          metrics_->AddGauge("vigil_drift_severity",
                             "Calibrated drift severity in [0, 1] of a feature (or model_score) "
                             "in an event-time window, as of its last evaluation.",
                             labels));
      VIGIL_ASSIGN_OR_RETURN(
          gauges.score,
          metrics_->AddGauge("vigil_drift_score",
                             "Raw weighted drift score (KL, JS, PSI) of a feature (or "
                             "model_score) in an event-time window, as of its last evaluation.",
                             labels));
      windows.push_back(gauges);
    }
    g->windows.push_back(std::move(windows));
    Gauge* level = nullptr;
    VIGIL_ASSIGN_OR_RETURN(level,
                           metrics_->AddGauge("vigil_drift_level",
                                              "Drift level of a feature (or model_score), the "
                                              "highest of its windows: 0 none, 1..3 L1..L3.",
                                              {{"subject", subject.name}}));
    g->level.push_back(level);
  }
  VIGIL_ASSIGN_OR_RETURN(
      g->monitor_level, metrics_->AddGauge("vigil_drift_monitor_level",
                                           "The drift monitor's level, the highest subject "
                                           "level: 0 none, 1 log, 2 retrain requested, 3 frozen."));
  VIGIL_ASSIGN_OR_RETURN(g->frozen,
                         metrics_->AddGauge("vigil_drift_frozen",
                                            "1 while drift holds the model frozen (decisions "
                                            "rules-only, degraded), else 0."));
  VIGIL_ASSIGN_OR_RETURN(g->drifted_share,
                         metrics_->AddGauge("vigil_drift_drifted_share",
                                            "Share of the monitored features at L2 or above."));
  VIGIL_ASSIGN_OR_RETURN(g->events,
                         metrics_->AddCounter("vigil_drift_events_total",
                                              "Drift events raised (level changes, retrain "
                                              "requests, escalations, freezes and releases)."));
  drift_gauges_ = std::move(g);
  return absl::OkStatus();
}

void VigilServer::RefreshDriftGauges() {
  // /metrics answers while Load runs: the drift members are published by SetReady.
  if (!api_->ready() || drift_gauges_ == nullptr) return;
  DriftGauges& g = *drift_gauges_;
  const drift::DriftState state = drift_monitor_->State(/*exact=*/false);
  for (size_t s = 0; s < state.subjects.size() && s < g.windows.size(); ++s) {
    const drift::DriftSubjectState& subject = state.subjects[s];
    for (size_t w = 0; w < subject.windows.size() && w < g.windows[s].size(); ++w) {
      g.windows[s][w].severity->Set(subject.windows[w].severity);
      g.windows[s][w].score->Set(subject.windows[w].score);
    }
    g.level[s]->Set(static_cast<double>(subject.level));
  }
  g.monitor_level->Set(static_cast<double>(state.level));
  g.frozen->Set(state.frozen ? 1 : 0);
  g.drifted_share->Set(state.drifted_share);
  absl::MutexLock lock(&g.mu);
  if (state.events > g.events_reported) {
    g.events->Increment(state.events - g.events_reported);
    g.events_reported = state.events;
  }
}

struct VigilServer::ClusterMetrics {
  Gauge* position = nullptr;
  Gauge* owned = nullptr;
  Gauge* payments = nullptr;
  Gauge* decisions = nullptr;
  Gauge* redeliveries = nullptr;
  Gauge* duplicates = nullptr;
  Gauge* batches = nullptr;
  Gauge* fenced = nullptr;
  Gauge* leases_lost = nullptr;
  Gauge* takeovers = nullptr;
  Gauge* max_trailing_messages = nullptr;
  Gauge* max_trailing_ms = nullptr;
  Gauge* restored_position = nullptr;
  Gauge* checkpoint_position = nullptr;
  Gauge* checkpoints = nullptr;
  Gauge* checkpoint_failures = nullptr;
  Gauge* shipped_position = nullptr;
  Gauge* shipments = nullptr;
  Gauge* shipment_failures = nullptr;
  struct Partition {
    Gauge* decided_here = nullptr;
    Gauge* pending = nullptr;
    Gauge* decisions = nullptr;
    Gauge* owner_changes = nullptr;
  };
  std::vector<Partition> partitions;
};

absl::Status VigilServer::StartCluster() {
  const ServeConfig& c = config_;
  const ServeClusterConfig& k = c.cluster;
  cluster::NatsOptions nats;
  nats.servers = k.nats;
  nats.name = absl::StrCat("vigil-", k.name, "-", k.node_id);
  VIGIL_ASSIGN_OR_RETURN(nats_, cluster::NatsConnection::Connect(nats));
  cluster::ClusterLayout layout;
  layout.name = k.name;
  layout.partitions = k.partitions;
  layout.replicas = k.replicas;
  // Every node builds the features of every account from the log (docs/cluster.md), kept in
  // <data_dir>/cluster: its last checkpoint, or the last one shipped when that is empty.
  const std::string state_dir = absl::StrCat(c.data_dir, "/cluster");
  VIGIL_ASSIGN_OR_RETURN(cluster::NodeState state,
                         cluster::OpenNodeState(nats_.get(), layout, state_dir, *fx_,
                                                FeatureConfig{}, std::chrono::seconds(30)));
  if (state.fetched.has_value()) {
    log_->Event("info", "cluster state restored from the shipped checkpoint",
                {{"position", absl::StrCat(state.fetched->position)},
                 {"shipped_by", state.fetched->node},
                 {"bytes", absl::StrCat(state.fetched->bytes())}});
  }
  cluster_state_ = std::move(state.store);
  auto decider = std::make_shared<cluster::PartitionDecider>(deployment_.get(), RealClock());
  cluster::ClusterNodeOptions options;
  options.layout = layout;
  options.node_id = k.node_id;
  options.checkpoint_every = static_cast<uint64_t>(k.checkpoint_every);
  options.checkpoint_interval = k.checkpoint_interval;
  options.ship_interval = k.ship_interval;
  options.scratch_dir = state_dir;
  options.lease_ttl = k.lease_ttl;
  options.max_batch = static_cast<size_t>(k.max_batch);
  options.answer_memory = c.idempotency_capacity;
  VIGIL_ASSIGN_OR_RETURN(cluster_node_,
                         cluster::ClusterNode::Start(nats_.get(), cluster_state_.get(),
                                                     std::move(decider), RealClock(), options));
  ClusterScoringOptions scoring;
  scoring.score_budget = c.score_budget;
  scoring.answer_slack = k.answer_slack;
  scoring.max_batch = c.limits.batch_size;
  scoring.max_future_skew = c.max_future_skew;
  cluster_scoring_ = std::make_unique<ClusterScoring>(cluster_node_.get(), scoring, RealClock());
  drift_summary_ = "off (cluster mode)";
  return RegisterClusterMetrics();
}

absl::Status VigilServer::RegisterClusterMetrics() {
  cluster_metrics_ = std::make_unique<ClusterMetrics>();
  ClusterMetrics& m = *cluster_metrics_;
  const auto gauge = [this](Gauge** out, std::string_view name, std::string_view help,
                            MetricLabels labels = {}) -> absl::Status {
    VIGIL_ASSIGN_OR_RETURN(*out, metrics_->AddGauge(ToAbsl(name), ToAbsl(help), labels));
    return absl::OkStatus();
  };
  VIGIL_RETURN_IF_ERROR(gauge(&m.position, "vigil_cluster_log_position",
                              "The last message of the cluster's log this node applied."));
  VIGIL_RETURN_IF_ERROR(
      gauge(&m.owned, "vigil_cluster_partitions_owned", "Partitions this node decides now."));
  VIGIL_RETURN_IF_ERROR(gauge(&m.payments, "vigil_cluster_payments_applied",
                              "Payments this node applied to its features from the log."));
  VIGIL_RETURN_IF_ERROR(gauge(&m.decisions, "vigil_cluster_decisions_applied",
                              "Decisions this node applied from the log (every partition's)."));
  VIGIL_RETURN_IF_ERROR(gauge(&m.redeliveries, "vigil_cluster_redeliveries_skipped",
                              "Log messages at or below the position applied, skipped."));
  VIGIL_RETURN_IF_ERROR(gauge(&m.duplicates, "vigil_cluster_duplicate_payments",
                              "Payments the log held twice under one id (past the stream's "
                              "duplicate window), applied once."));
  VIGIL_RETURN_IF_ERROR(gauge(&m.batches, "vigil_cluster_batches_written",
                              "Decision batches this node wrote to the log."));
  VIGIL_RETURN_IF_ERROR(gauge(&m.fenced, "vigil_cluster_batches_fenced",
                              "Decision batches the log refused because another node had taken "
                              "the partition over (nothing of them was written)."));
  VIGIL_RETURN_IF_ERROR(gauge(&m.leases_lost, "vigil_cluster_leases_lost",
                              "Leases this node could not renew (another node took them)."));
  VIGIL_RETURN_IF_ERROR(
      gauge(&m.takeovers, "vigil_cluster_takeovers", "Partitions this node took over."));
  VIGIL_RETURN_IF_ERROR(gauge(&m.max_trailing_messages, "vigil_cluster_max_trailing_messages",
                              "The most log messages a decision batch trailed its payment by "
                              "(the staleness bound, docs/cluster.md)."));
  VIGIL_RETURN_IF_ERROR(gauge(&m.max_trailing_ms, "vigil_cluster_max_trailing_ms",
                              "The most milliseconds a decision batch was stored after its "
                              "payment."));
  VIGIL_RETURN_IF_ERROR(gauge(&m.restored_position, "vigil_cluster_restored_position",
                              "The log position of the state this node restored at start (its "
                              "own last checkpoint, or the last one shipped; 0: none)."));
  VIGIL_RETURN_IF_ERROR(gauge(&m.checkpoint_position, "vigil_cluster_checkpoint_position",
                              "The log position of this node's last checkpoint in its data dir."));
  VIGIL_RETURN_IF_ERROR(gauge(&m.checkpoints, "vigil_cluster_checkpoints",
                              "Checkpoints of the applied state this node wrote."));
  VIGIL_RETURN_IF_ERROR(gauge(&m.checkpoint_failures, "vigil_cluster_checkpoint_failures",
                              "Checkpoint writes that failed (tried again)."));
  VIGIL_RETURN_IF_ERROR(gauge(&m.shipped_position, "vigil_cluster_shipped_position",
                              "The log position of the last checkpoint this node shipped to the "
                              "NATS servers."));
  VIGIL_RETURN_IF_ERROR(
      gauge(&m.shipments, "vigil_cluster_shipments", "Checkpoints this node shipped."));
  VIGIL_RETURN_IF_ERROR(gauge(&m.shipment_failures, "vigil_cluster_shipment_failures",
                              "Shipments that failed or lost to another node's."));
  for (int p = 0; p < config_.cluster.partitions; ++p) {
    ClusterMetrics::Partition& part = m.partitions.emplace_back();
    const MetricLabels labels = {{"partition", absl::StrCat(p)}};
    VIGIL_RETURN_IF_ERROR(gauge(&part.decided_here, "vigil_cluster_partition_decided_here",
                                "1 while this node decides the partition.", labels));
    VIGIL_RETURN_IF_ERROR(gauge(&part.pending, "vigil_cluster_partition_pending",
                                "The partition's payments in the log without a decision yet.",
                                labels));
    VIGIL_RETURN_IF_ERROR(gauge(&part.decisions, "vigil_cluster_partition_decisions",
                                "The partition's decisions applied.", labels));
    VIGIL_RETURN_IF_ERROR(gauge(&part.owner_changes, "vigil_cluster_partition_owner_changes",
                                "The partition's takeovers in the log.", labels));
  }
  return absl::OkStatus();
}

void VigilServer::RefreshClusterMetrics() {
  // /metrics answers while Load runs: the cluster's members are published by SetReady.
  if (!api_->ready() || cluster_node_ == nullptr || cluster_metrics_ == nullptr) return;
  const cluster::ClusterNodeStatus st = cluster_node_->status();
  ClusterMetrics& m = *cluster_metrics_;
  const auto set = [](Gauge* g, auto v) { g->Set(static_cast<double>(v)); };
  set(m.position, st.position);
  set(m.owned, st.owned.size());
  set(m.payments, st.applied.payments);
  set(m.decisions, st.applied.decisions);
  set(m.redeliveries, st.applied.redeliveries);
  set(m.duplicates, st.applied.duplicates);
  set(m.batches, st.batches_written);
  set(m.fenced, st.fenced);
  set(m.leases_lost, st.leases_lost);
  set(m.takeovers, st.takeovers);
  set(m.max_trailing_messages, st.max_trailing_messages);
  set(m.max_trailing_ms, st.max_trailing_ms);
  set(m.restored_position, st.restored_position);
  set(m.checkpoint_position, st.checkpoint_position);
  set(m.checkpoints, st.checkpoints);
  set(m.checkpoint_failures, st.checkpoint_failures);
  set(m.shipped_position, st.shipped_position);
  set(m.shipments, st.shipments);
  set(m.shipment_failures, st.shipment_failures);
  for (const cluster::PartitionStatus& ps : st.partitions) {
    if (ps.partition >= static_cast<int>(m.partitions.size())) break;
    ClusterMetrics::Partition& part = m.partitions[ps.partition];
    set(part.decided_here, ps.decided_here ? 1 : 0);
    set(part.pending, ps.pending);
    set(part.decisions, ps.decisions);
    set(part.owner_changes, ps.takeovers);
  }
}

void VigilServer::RefreshGauges() {
  RefreshClusterMetrics();
  RefreshCaseGauges();
  if (gauges_ == nullptr || deployment_ == nullptr) return;
  const Gauges& g = *gauges_;
  const auto snapshot = deployment_->Current();
  const std::array<const ModelDeployment::Model*, 2> models = {snapshot->champion.get(),
                                                               snapshot->challenger.get()};
  for (size_t r = 0; r < models.size(); ++r) {
    const ModelDeployment::Model* m = models[r];
    for (int cls = 0; cls < 3; ++cls) {
      g.queue_depth[r][cls]->Set(m != nullptr && m->batcher != nullptr
                                     ? static_cast<double>(m->batcher->queued(static_cast<Priority>(cls)))
                                     : 0);
    }
    double state = -1;
    if (m != nullptr && m->breaker != nullptr) state = static_cast<double>(m->breaker->state());
    g.breaker_state[r]->Set(state);
    if (gpu_metrics_ != nullptr) {
      const double gpu_state = m != nullptr && m->router != nullptr
                                   ? static_cast<double>(m->router->stats().breaker)
                                   : -1;
      gpu_metrics_->breaker_state[r]->Set(gpu_state);
    }
  }
  RefreshGpuMetrics();
  const HttpServer::Stats http = http_->stats();
  g.connections->Set(static_cast<double>(http.open));
  // Concurrent scrapes add each eviction once (the counted value only moves forward).
  uint64_t counted = g.evicted_counted.load();
  while (http.evicted > counted &&
         !g.evicted_counted.compare_exchange_weak(counted, http.evicted)) {
  }
  if (http.evicted > counted) g.connections_evicted->Increment(http.evicted - counted);
  g.workers_busy->Set(static_cast<double>(workers_->busy()));
  g.workers_queued->Set(static_cast<double>(workers_->queued()));
  if (const audit::AuditLog* log = service_ != nullptr ? service_->audit_log() : nullptr) {
    const audit::AuditLogStats stats = log->stats();
    g.audit_records->Set(static_cast<double>(log->size()));
    g.audit_groups->Set(static_cast<double>(stats.groups));
    g.audit_syncs->Set(static_cast<double>(stats.syncs));
    g.audit_bytes->Set(static_cast<double>(stats.bytes_written));
    g.audit_tree_heads->Set(static_cast<double>(stats.tree_heads));
    g.audit_refused->Set(static_cast<double>(stats.refused));
    g.audit_healthy->Set(log->health().ok() ? 1 : 0);
  }
  RefreshDriftGauges();
}

absl::Status VigilServer::Shutdown() {
  if (shut_down_) return absl::OkStatus();
  shut_down_ = true;
  http_->StopAccepting();
  workers_->Shutdown();  // every accepted request is decided
  api_->WaitForAnswers();  // and answered (some once their records are durable)
  http_->Stop();
  stop_background_.Notify();
  if (checkpointer_.joinable()) checkpointer_.join();
  // Waits for a reload in progress to finish.
  if (screening_poller_.joinable()) screening_poller_.join();
  if (drift_tap_ != nullptr) {
    // Every decision made is observed (and its events stored) before the last checkpoint.
    drift_tap_->Drain();
    if (absl::Status st = drift_tap_->status(); !st.ok()) {
      log_->Event("error", "drift monitor failed to record an event",
                  {{"error", std::string(st.message())}});
    }
  }
  // A cluster node checkpoints its state and hands its partitions over (deletes its leases)
  // before it goes.
  cluster_node_.reset();
  cluster_state_.reset();
  absl::Status status = service_ != nullptr ? service_->Checkpoint() : absl::OkStatus();
  log_->Event("info", "vigil serve stopped",
              {{"checkpoint", status.ok() ? "ok" : std::string(status.message())}});
  log_->Flush();
  return status;
}

VigilServer::~VigilServer() {
  if (http_ != nullptr) Shutdown().IgnoreError();
}

}  // namespace vigil
